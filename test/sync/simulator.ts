/**
 * An in-memory mirror root and store that performs planner actions with the executor's
 * checks (expected lstat, never overwrite, parent must exist), so planner properties can be
 * tested over many random histories without touching the disk. Any violated check throws.
 */

import type { LocalEntry, LocallyDeleted, LocalStat } from "../../src/domain/LocalEntry.ts"
import { movedVersion, remoteVersionOf } from "../../src/domain/LocalEntry.ts"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { foldName } from "../../src/sync/names.ts"
import type { Action } from "../../src/sync/planner.ts"

export interface SimFile extends LocalStat {
  /** What the bytes are: `remote:<id>:<size>:<updatedAt>` or `user:<token>`. */
  readonly content: string
}

export class Sim {
  /** Keyed by the path as spelled on disk; lookups fold case when the root ignores it. */
  readonly disk = new Map<string, SimFile>()
  readonly entries = new Map<string, LocalEntry>()
  readonly markers = new Map<string, LocallyDeleted>()
  private clock = 1_000n
  private inode = 1n
  private readonly caseInsensitive: boolean

  constructor(options: { readonly caseInsensitive?: boolean } = {}) {
    this.caseInsensitive = options.caseInsensitive ?? false
  }

  /** The path as spelled on disk for `path`, if something is there. */
  find(path: string): string | undefined {
    if (this.disk.has(path)) return path
    if (!this.caseInsensitive) return undefined
    const k = this.key(path)
    for (const p of this.disk.keys()) if (this.key(p) === k) return p
    return undefined
  }

  get(path: string): SimFile | undefined {
    const found = this.find(path)
    return found === undefined ? undefined : this.disk.get(found)
  }

  key(path: string): string {
    return path
      .split("/")
      .map((c) => foldName(c, this.caseInsensitive))
      .join("/")
  }

  /** What a scan reports: everything but `.dlsync/`, except items waiting in `.dlsync/moving`. */
  stats(): Map<string, LocalStat> {
    const seen = (p: string) => !isOwn(p) || p === ".dlsync/moving" || p.startsWith(".dlsync/moving/")
    return new Map([...this.disk].filter(([p]) => seen(p)))
  }

  localEntries(): Array<LocalEntry> {
    return [...this.entries.values()]
  }

  locallyDeleted(): Array<LocallyDeleted> {
    return [...this.markers.values()]
  }

  /** A user writes a file (new or over an existing one): new content, mtime and inode. */
  userWrite(path: string, token: string): void {
    this.ensureParent(path)
    this.disk.set(this.find(path) ?? path, this.fresh("file", token.length, `user:${token}`))
  }

  userDelete(path: string): void {
    const real = this.find(path) ?? path
    for (const p of [...this.disk.keys()]) if (p === real || p.startsWith(real + "/")) this.disk.delete(p)
  }

  apply(actions: ReadonlyArray<Action>): void {
    for (const action of actions) this.applyOne(action)
  }

  applyOne(a: Action): void {
    switch (a._tag) {
      case "Mkdir": {
        this.ensureParent(a.path)
        this.mustBeAbsent(a.path, a)
        const stat = this.fresh("folder", 0, "folder")
        this.disk.set(a.path, stat)
        this.putEntry(a.path, a.item, stat)
        return
      }
      case "Download": {
        this.ensureParent(a.path)
        const current = this.get(a.path)
        if (a.replace === null) this.mustBeAbsent(a.path, a)
        else if (current === undefined || !same(current, a.replace)) throw fail("replace target changed", a)
        const stat = this.landed(a.item)
        this.disk.delete(this.find(a.path) ?? a.path)
        this.disk.set(a.path, stat)
        this.putEntry(a.path, a.item, stat)
        return
      }
      case "Rename":
      case "ConflictCopy": {
        const current = this.get(a.from)
        if (current === undefined || !same(current, a.expected)) throw fail("source changed", a)
        if (a.to.startsWith(".dlsync/")) this.mkdirs(a.to.slice(0, a.to.lastIndexOf("/")))
        this.ensureParent(a.to)
        if (this.key(a.to) !== this.key(a.from)) this.mustBeAbsent(a.to, a)
        this.moveTree(this.find(a.from) ?? a.from, a.to)
        if (a._tag === "ConflictCopy") this.entries.delete(a.to)
        else {
          this.moveEntries(a.from, a.to)
          const entry = this.entries.get(a.to)
          if (a.item !== null && entry !== undefined) {
            this.entries.set(a.to, { ...entry, remote: movedVersion(entry.remote, a.item) })
          }
        }
        return
      }
      case "Trash":
      case "Delete": {
        const current = this.get(a.path)
        if (current === undefined || !same(current, a.expected)) throw fail("removal target changed", a)
        if (a._tag === "Trash") {
          const to = `.dlsync/trash/${a.path}`
          this.mkdirs(to.slice(0, to.lastIndexOf("/")))
          this.disk.set(to, current)
        }
        this.disk.delete(this.find(a.path) ?? a.path)
        this.entries.delete(a.path)
        return
      }
      case "RemoveFolder": {
        const real = this.find(a.path) ?? a.path
        const hasChildren = [...this.disk.keys()].some((p) => p.startsWith(real + "/"))
        if (!hasChildren) this.disk.delete(real)
        this.entries.delete(a.path)
        return
      }
      case "Adopt":
        this.putEntry(a.path, a.item, a.stat)
        return
      case "Refresh": {
        const entry = this.entries.get(a.path)
        if (entry === undefined) throw fail("no entry to refresh", a)
        this.entries.set(a.path, { ...entry, remote: remoteVersionOf(a.item) })
        return
      }
      case "MarkLocallyDeleted":
        for (const [p, e] of this.entries) if (e.remoteId === a.remoteId) this.entries.delete(p)
        this.markers.set(a.remoteId, { remoteId: a.remoteId, path: a.path })
        return
      case "Forget":
        if (a.what === "marker") this.markers.delete(a.remoteId)
        else this.entries.delete(a.path)
        return
      case "HoldDeletes":
      case "Skip":
        return
    }
  }

  private putEntry(path: string, item: RemoteItem, stat: LocalStat): void {
    for (const [p, e] of this.entries) if (e.remoteId === item.id) this.entries.delete(p)
    this.entries.set(path, {
      path,
      remoteId: item.id,
      type: item.type,
      written: { size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino },
      remote: remoteVersionOf(item),
      state: "synced",
      attempts: 0,
      lastError: null
    })
  }

  private moveTree(from: string, to: string): void {
    for (const [p, f] of [...this.disk]) {
      if (p === from || p.startsWith(from + "/")) {
        this.disk.delete(p)
        this.disk.set(to + p.slice(from.length), f)
      }
    }
  }

  private moveEntries(from: string, to: string): void {
    for (const p of [...this.entries.keys()]) {
      if (p === to || p.startsWith(to + "/")) this.entries.delete(p)
    }
    for (const [p, e] of [...this.entries]) {
      if (p === from || p.startsWith(from + "/")) {
        this.entries.delete(p)
        const path = to + p.slice(from.length)
        this.entries.set(path, { ...e, path })
      }
    }
  }

  private ensureParent(path: string): void {
    const slash = path.lastIndexOf("/")
    if (slash < 0) return
    const parent = path.slice(0, slash)
    if (this.get(parent)?.type !== "folder") throw new Error(`parent of ${path} is not a folder`)
  }

  private mkdirs(path: string): void {
    let at = ""
    for (const part of path.split("/")) {
      at = at === "" ? part : `${at}/${part}`
      if (this.find(at) === undefined) this.disk.set(at, this.fresh("folder", 0, "folder"))
    }
  }

  private mustBeAbsent(path: string, a: Action): void {
    if (this.find(path) !== undefined) throw fail(`${path} exists`, a)
  }

  /** A file as the transfer engine lands it: the remote size, the remote updated_at as mtime. */
  private landed(item: RemoteItem): SimFile {
    this.inode += 1n
    const mtimeNs = BigInt(Date.parse(item.updatedAt)) * 1_000_000n
    return { type: "file", size: item.size, mtimeNs, ino: this.inode, content: contentOf(item) }
  }

  private fresh(type: LocalStat["type"], size: number, content: string): SimFile {
    this.clock += 1n
    this.inode += 1n
    return { type, size, mtimeNs: this.clock, ino: this.inode, content }
  }
}

/** What a download of `item` writes; a version is told by its size (see model.hasNewContent). */
/** Whether a path is dlsync's own (`.dlsync` at the root or below it). */
export const isOwn = (path: string): boolean => path === ".dlsync" || path.startsWith(".dlsync/")
/** What a download of `item` writes. */
export const contentOf = (item: RemoteItem): string => `remote:${item.id}:${item.size}:${item.updatedAt}`

const same = (a: LocalStat, b: LocalStat): boolean =>
  a.type === b.type && a.ino === b.ino && (a.type === "folder" || (a.size === b.size && a.mtimeNs === b.mtimeNs))

const fail = (what: string, a: Action): Error => new Error(`${what}: ${JSON.stringify(a, replacer)}`)

const replacer = (_: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v)
