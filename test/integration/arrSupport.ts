/**
 * What the end-to-end tests of the *arr surfaces share: the real daemon with a surface on a
 * free loopback port, the emulator's downloads and its files below a category, and the disk
 * checks the apps rely on (a release said complete is whole on disk; nothing temporary is
 * ever visible in the folder they import from).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import type { Sandbox } from "./harness.ts"

export const daemonsStarted: Array<ReturnType<Sandbox["spawn"]>> = []

/** Stops what `startDaemon` started (SIGTERM, then waits). */
export const stopDaemons = async () => {
  for (const d of daemonsStarted.splice(0)) {
    if (d.child.exitCode === null && d.child.signalCode === null) {
      d.child.kill("SIGTERM")
      await d.exit.catch(() => undefined)
    }
  }
}

/** `dlsync run` with a 1 s poll interval and the given environment. */
export const startDaemon = (b: Sandbox, env: Record<string, string>) => {
  const daemon = b.spawn(["run"], { env: { DLSYNC_SYNC_POLL_INTERVAL: "1s", ...env }, deadlineMs: 120_000 })
  daemonsStarted.push(daemon)
  return daemon
}

/** The emulator's download timings (ms per phase). */
export const downloadTimings = async (b: Sandbox, processing: number, downloading: number, finalizing: number) => {
  const response = await fetch(`${b.emu.controlUrl}/downloads/timings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ processing_ms: processing, downloading_ms: downloading, finalizing_ms: finalizing })
  })
  assert.strictEqual(response.status, 204)
}

export const blockDownload = async (b: Sandbox, id: string, message: string) => {
  const response = await fetch(`${b.emu.controlUrl}/downloads/${id}/block`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message })
  })
  assert.strictEqual(response.status, 204)
}

export interface ServiceDownload {
  readonly id: string
  readonly status: string
  readonly client_reference?: string | null
}

/** The downloads the emulator holds. */
export const serviceDownloads = async (b: Sandbox): Promise<ReadonlyArray<ServiceDownload>> => {
  const body = (await (await fetch(`${b.emu.controlUrl}/downloads`)).json()) as { data: Array<ServiceDownload> }
  return body.data
}

/** POST /downloads (and /downloads/upload) requests the emulator received. */
export const creations = (b: Sandbox) =>
  b.emu.control.requests({ origin: "api" }).filter((r) => r.method === "POST" && r.path.startsWith("/api/v1/downloads"))

export interface RemoteFile {
  /** Relative to the mirror root, "/"-separated. */
  readonly path: string
  readonly size: number
  readonly content: () => Buffer
}

/** The account's files below `prefix` (a folder path relative to the root). */
export const remoteFilesBelow = (b: Sandbox, prefix: string): Array<RemoteFile> => {
  const tree = b.emu.state.primaryUser.tree
  const out: Array<RemoteFile> = []
  for (const item of tree.values()) {
    if (item.type !== "file") continue
    const path = tree.pathOf(item.id).join("/")
    if (!path.startsWith(`${prefix}/`)) continue
    const { id, contentVersion, sizeBytes } = item
    out.push({
      path,
      size: sizeBytes,
      content: () => {
        const bytes = Buffer.alloc(sizeBytes)
        fillContent(contentKey(id, contentVersion), 0, bytes)
        return bytes
      }
    })
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : 1))
}

/** Every regular file below `abs` (absolute paths); none when it does not exist. */
export const filesBelow = (abs: string): Array<string> => {
  const out: Array<string> = []
  const walk = (dir: string) => {
    let names: Array<string>
    try {
      names = Fs.readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const path = Path.join(dir, name)
      const stat = Fs.lstatSync(path, { throwIfNoEntry: false })
      if (stat?.isDirectory()) walk(path)
      else if (stat !== undefined) out.push(path)
    }
  }
  walk(abs)
  return out.sort()
}

/**
 * The folder the app imports from, at one instant: every file there is one of the
 * account's files below `category`, at its full size (a temporary or half-written file
 * fails). Returns the number of files seen.
 */
export const assertNothingTemporary = (b: Sandbox, category: string, when: string): number => {
  const remote = new Map(remoteFilesBelow(b, category).map((f) => [f.path, f.size]))
  const local = filesBelow(Path.join(b.root, category))
  for (const abs of local) {
    const rel = Path.relative(b.root, abs).split(Path.sep).join("/")
    const stat = Fs.lstatSync(abs, { throwIfNoEntry: false })
    // Gone between the listing and the stat: a move away, nothing seen half-done.
    if (stat === undefined) continue
    assert.isTrue(stat.isFile(), `${when}: ${rel} is not a regular file`)
    const size = remote.get(rel)
    assert.isDefined(size, `${when}: ${rel} is in ${category}/ but is no file of the account (temporary?)`)
    assert.strictEqual(stat.size, size, `${when}: ${rel} is visible at ${stat.size} of ${size} bytes`)
  }
  return local.length
}

/**
 * What a release said complete must be: every one of the account's files below
 * `remoteFolder` on disk below `localPath` (the app's content_path / storage), whole and
 * with the right bytes. Returns the files checked.
 */
export const assertWholeOnDisk = (b: Sandbox, remoteFolder: string, localPath: string, when: string): number => {
  const remote = remoteFilesBelow(b, remoteFolder)
  assert.isAbove(remote.length, 0, `${when}: the account has files below ${remoteFolder}`)
  assert.strictEqual(localPath, Path.join(b.root, remoteFolder), `${when}: the path the app imports from`)
  for (const file of remote) {
    const abs = Path.join(b.root, file.path)
    const stat = Fs.lstatSync(abs, { throwIfNoEntry: false })
    assert.isTrue(stat?.isFile() === true, `${when}: ${file.path} is missing`)
    assert.strictEqual(stat?.size, file.size, `${when}: ${file.path} has ${stat?.size} of ${file.size} bytes`)
    assert.isTrue(Fs.readFileSync(abs).equals(file.content()), `${when}: ${file.path} has the wrong bytes`)
  }
  return remote.length
}

/** The store's intake records (read-only, beside the running daemon). */
export const intakeRows = (
  b: Sandbox
): Array<{ readonly id: string; readonly phase: string; readonly download_id: string | null }> => {
  const file = Path.join(b.stateDir, "state.db")
  if (!Fs.existsSync(file)) return []
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
  try {
    db.pragma("busy_timeout = 5000")
    return db.prepare("SELECT id, phase, download_id FROM intakes ORDER BY added_at, id").all() as Array<{
      id: string
      phase: string
      download_id: string | null
    }>
  } catch {
    return []
  } finally {
    db.close()
  }
}

/** The files in the mirror's trash (relative to it, "/"-separated). */
export const trashed = (b: Sandbox): Array<string> => {
  const trash = Path.join(b.root, ".dlsync", "trash")
  return filesBelow(trash).map((abs) => Path.relative(trash, abs).split(Path.sep).join("/"))
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
