/**
 * An in-memory Intake for the surfaces' tests, keeping the contract's invariants
 * (src/intake/Intake.ts):
 * - the identity is computed from the source as the apps compute it (a magnet's btih, base32
 *   or hex; a .torrent's info-hash; a hash of an NZB's bytes or a URL), and `add` of a known
 *   identity returns the existing item;
 * - an item is `completed` only through `complete`, which first writes every file of the
 *   release under `contentPath` on the real disk (so a test can check the disk whenever the
 *   API says complete); `contentPath` is never `savePath`;
 * - a removed identity is tombstoned: it comes back only when added again.
 * The control plane (`set`, `complete`, `fail`) moves items the way the real queue does.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { magnetDecode } from "@ctrl/magnet-link"
import { files as torrentFiles, hash as torrentHash } from "@ctrl/torrent-file"
import { Clock, Effect, Option } from "effect"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import {
  type AddOptions,
  Intake,
  IntakeError,
  type IntakeItem,
  type IntakeSource,
  type ListFilter
} from "../../src/intake/Intake.ts"

export interface MemoryIntakeControl {
  readonly intake: Intake["Service"]
  readonly items: () => ReadonlyArray<IntakeItem>
  readonly tombstones: ReadonlySet<IntakeId>
  /** Changes fields of an item as the queue would (not `completed`: use `complete`). */
  readonly set: (id: IntakeId, patch: Partial<Omit<IntakeItem, "id" | "state">> & { state?: IntakeState }) => void
  /** Writes every file of the release under contentPath, then marks it completed. */
  readonly complete: (id: IntakeId) => Effect.Effect<void>
  readonly fail: (id: IntakeId, reason: string) => void
  /** Every call the surface made, in order (method and arguments). */
  readonly calls: ReadonlyArray<{ readonly method: string; readonly args: unknown }>
}

type IntakeState = Exclude<IntakeItem["state"], "completed">

/** A release's files when the source does not list them (a magnet before its metadata). */
const MAGNET_FILE_SIZE = 1000

export const makeMemoryIntake = (root: string, configured: ReadonlyArray<string> = []): MemoryIntakeControl => {
  const items = new Map<IntakeId, IntakeItem>()
  const tombstones = new Set<IntakeId>()
  const categories = new Set<string>(configured)
  const calls: Array<{ method: string; args: unknown }> = []
  const savePathOf = (category: string) => (category === "" ? root : Path.join(root, ...category.split("/")))

  const add = (source: IntakeSource, options: AddOptions) =>
    Effect.gen(function* () {
      calls.push({ method: "add", args: { source: source._tag, options } })
      const identified = identify(source)
      if (identified === undefined) {
        return yield* new IntakeError({ reason: "invalid", problem: `not a readable ${source._tag}` })
      }
      const existing = items.get(identified.id)
      if (existing !== undefined) return existing
      tombstones.delete(identified.id)
      sources.set(identified.id, source)
      if (options.category !== "") categories.add(options.category)
      const now = yield* Clock.currentTimeMillis
      const item = itemOf(identified, options, now, savePathOf(options.category))
      items.set(item.id, item)
      return item
    })

  const sources = new Map<IntakeId, IntakeSource>()
  const intake = Intake.of({
    add,
    source: (id) => Effect.sync(() => (items.has(id) ? Option.fromNullishOr(sources.get(id)) : Option.none())),
    list: (filter?: ListFilter) =>
      Effect.sync(() =>
        [...items.values()].filter(
          (item) =>
            (filter?.via === undefined || item.via === filter.via) &&
            (filter?.category === undefined || item.category === filter.category) &&
            (filter?.ids === undefined || filter.ids.includes(item.id))
        )
      ),
    remove: (ids, deleteFiles) =>
      Effect.sync(() => {
        calls.push({ method: "remove", args: { ids, deleteFiles } })
        for (const id of ids) {
          const item = items.get(id)
          if (item === undefined) continue
          if (deleteFiles) Fs.rmSync(item.contentPath, { recursive: true, force: true })
          items.delete(id)
          tombstones.add(id)
        }
      }),
    pause: (ids) =>
      Effect.sync(() => {
        calls.push({ method: "pause", args: ids })
        for (const id of ids) update(id, (item) => (item.state === "completed" ? item : { ...item, state: "paused" }))
      }),
    resume: (ids) =>
      Effect.sync(() => {
        calls.push({ method: "resume", args: ids })
        for (const id of ids) update(id, (item) => (item.state === "paused" ? { ...item, state: "queued" } : item))
      }),
    setCategory: (ids, category) =>
      Effect.sync(() => {
        calls.push({ method: "setCategory", args: { ids, category } })
        for (const id of ids) update(id, (item) => ({ ...item, category }))
      }),
    choose: (id) => Effect.fail(new IntakeError({ reason: "invalid", problem: `${id} waits for no selection` })),
    categories: () => Effect.sync(() => [...categories].sort().map((name) => ({ name, savePath: savePathOf(name) }))),
    createCategory: (_via, name) =>
      Effect.sync(() => {
        calls.push({ method: "createCategory", args: name })
        categories.add(name)
      }),
    removeCategories: (_via, names) =>
      Effect.sync(() => {
        calls.push({ method: "removeCategories", args: names })
        for (const name of names) categories.delete(name)
      })
  })

  const update = (id: IntakeId, f: (item: IntakeItem) => IntakeItem) => {
    const item = items.get(id)
    if (item !== undefined) items.set(id, f(item))
  }

  return {
    intake,
    items: () => [...items.values()],
    tombstones,
    calls,
    set: (id, patch) => update(id, (item) => ({ ...item, ...patch })),
    fail: (id, reason) => update(id, (item) => ({ ...item, state: "failed", reason })),
    complete: (id) =>
      Effect.gen(function* () {
        const item = items.get(id)
        if (item === undefined) return
        for (const file of item.files) {
          const path = Path.join(item.savePath, file.name)
          Fs.mkdirSync(Path.dirname(path), { recursive: true })
          Fs.writeFileSync(path, Buffer.alloc(file.size, 7))
        }
        const now = yield* Clock.currentTimeMillis
        update(id, (current) => ({
          ...current,
          state: "completed",
          progress: 1,
          remaining: 0,
          etaSeconds: 0,
          completedAt: now,
          files: current.files.map((f) => ({ ...f, localBytes: f.size }))
        }))
      })
  }
}

// ---------------------------------------------------------------------------------------

interface Identified {
  readonly id: IntakeId
  readonly name: string
  /** Relative to the save path, "/"-separated (the release folder first when multi-file). */
  readonly files: ReadonlyArray<{ readonly name: string; readonly size: number }>
  /** The release is one file (contentPath is that file). */
  readonly single: boolean
}

const identify = (source: IntakeSource): Identified | undefined => {
  try {
    switch (source._tag) {
      case "Magnet": {
        const magnet = magnetDecode(source.uri)
        const hex = magnet.infoHash ?? magnet.infoHashV2?.slice(0, 40)
        if (hex === undefined || !/^[0-9a-f]{40}$/.test(hex)) return undefined
        const dn = Array.isArray(magnet.dn) ? magnet.dn[0] : magnet.dn
        const name = dn ?? hex
        return {
          id: IntakeId.make(`btih:${hex}`),
          name,
          files: [{ name: `${name}/${name}.mkv`, size: MAGNET_FILE_SIZE }],
          single: false
        }
      }
      case "TorrentFile": {
        const id = IntakeId.make(`btih:${torrentHash(source.content)}`)
        const data = torrentFiles(source.content)
        const single = data.files.length === 1 && !data.files[0]!.path.includes("/")
        const name = single ? data.files[0]!.name : (data.files[0]!.path.split("/")[0] ?? "release")
        return {
          id,
          name,
          files: data.files.map((f) => ({ name: f.path.replaceAll("\\", "/"), size: f.length })),
          single
        }
      }
      case "NzbFile":
        return {
          id: IntakeId.make(`sha256:${createHash("sha256").update(source.content).digest("hex")}`),
          name: source.fileName.replace(/\.nzb$/i, ""),
          files: [],
          single: false
        }
      case "Url":
        return {
          id: IntakeId.make(`sha256:${createHash("sha256").update(source.url).digest("hex")}`),
          name: source.url.split("/").pop() ?? source.url,
          files: [],
          single: false
        }
    }
  } catch {
    return undefined
  }
}

const itemOf = (identified: Identified, options: AddOptions, now: number, savePath: string): IntakeItem => {
  const size = identified.files.reduce((sum, f) => sum + f.size, 0)
  const contentPath = identified.single
    ? Path.join(savePath, identified.files[0]?.name ?? identified.name)
    : Path.join(savePath, identified.name)
  return {
    id: identified.id,
    name: identified.name,
    category: options.category,
    via: options.via,
    state: options.paused === true ? "paused" : "queued",
    reason: null,
    progress: 0,
    size,
    remaining: size,
    rate: 0,
    etaSeconds: null,
    addedAt: now,
    completedAt: null,
    expectedStartAt: null,
    savePath,
    contentPath,
    downloadId: null,
    selection: null,
    files: identified.files.map((f) => ({ ...f, localBytes: 0 }))
  }
}
