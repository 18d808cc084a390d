/**
 * The in-memory Intake every surface's test runs over. It keeps the contract of
 * src/intake/Intake.ts, which test/intake/intakeContract.test.ts checks over it and over
 * IntakeLive alike:
 * - the identity and the name come from the source as IntakeLive computes them
 *   (src/intake/identity.ts), an unreadable source is `invalid`, and `add` of a known
 *   identity returns the existing item; one another surface added is refused;
 * - a removed identity is tombstoned: nothing reaches it until it is added again, fresh;
 * - categories are checked by the one rule (categoryName.ts); a surface sees the configured
 *   ones and those created through it;
 * - an item is `completed` only through `complete`, which first writes every file of the
 *   release under `contentPath` on the real disk (sparse, so sizes cost nothing), so a test
 *   can check the disk whenever an API says complete; `contentPath` is never `savePath`.
 * The control plane moves items through their life as the queue would; each step reads the
 * time from the Clock.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { files as torrentFiles } from "@ctrl/torrent-file"
import { Clock, Effect, Option, Result } from "effect"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { categoryProblem } from "../../src/intake/categoryName.ts"
import {
  type AddOptions,
  Intake,
  IntakeError,
  type IntakeItem,
  type IntakeSource,
  type IntakeSurface
} from "../../src/intake/Intake.ts"
import { identify } from "../../src/intake/identity.ts"
import { releaseFolderName } from "../../src/intake/releaseFolder.ts"

/** One call a surface made on the intake. */
export type IntakeCall =
  | { readonly method: "add"; readonly args: { readonly source: IntakeSource; readonly options: AddOptions } }
  | {
      readonly method: "remove"
      readonly args: { readonly ids: ReadonlyArray<IntakeId>; readonly deleteFiles: boolean }
    }
  | { readonly method: "pause" | "resume"; readonly args: ReadonlyArray<IntakeId> }
  | {
      readonly method: "setCategory"
      readonly args: { readonly ids: ReadonlyArray<IntakeId>; readonly category: string }
    }
  | { readonly method: "choose"; readonly args: { readonly id: IntakeId; readonly itemId: string } }
  | { readonly method: "createCategory"; readonly args: string }
  | { readonly method: "removeCategories"; readonly args: ReadonlyArray<string> }

export interface MemoryIntake {
  readonly intake: Intake["Service"]
  /** The live items as `list()` gives them, oldest first. */
  readonly items: Effect.Effect<ReadonlyArray<IntakeItem>>
  /** Every call a surface made, in order (refused ones too). */
  readonly calls: Effect.Effect<ReadonlyArray<IntakeCall>>
  /** The arguments of every `add`, in order. */
  readonly added: Effect.Effect<ReadonlyArray<{ readonly source: IntakeSource; readonly options: AddOptions }>>
  /** The arguments of every `remove`, in order. */
  readonly removed: Effect.Effect<
    ReadonlyArray<{ readonly ids: ReadonlyArray<IntakeId>; readonly deleteFiles: boolean }>
  >
  /** Changes fields of an item as the queue would (not `completed`: use `complete`). */
  readonly set: (
    id: IntakeId,
    patch: Partial<Omit<IntakeItem, "id" | "state">> & { state?: Unfinished }
  ) => Effect.Effect<void>
  /** The service took it and fetches it: `downloading` at this progress of `size` bytes, with a download id. */
  readonly progress: (id: IntakeId, progress: number, size: number, etaSeconds: number | null) => Effect.Effect<void>
  /** Writes every file of the release under `contentPath` (one file of its size when the source lists none), then marks it completed. */
  readonly complete: (id: IntakeId) => Effect.Effect<void>
  /** The service failed it, saying why. */
  readonly fail: (id: IntakeId, reason: string) => Effect.Effect<void>
}

type Unfinished = Exclude<IntakeItem["state"], "completed">

/** A magnet's one file until the service knows better (the source lists none). */
const MAGNET_FILE_SIZE = 1000

interface Entry {
  readonly item: IntakeItem
  readonly source: IntakeSource
  /** Paused by a surface: shown as paused while neither completed nor failed. */
  readonly paused: boolean
}

export const makeMemoryIntake = (root: string, configured: ReadonlyArray<string> = []): MemoryIntake => {
  /** The live releases, oldest first; a removal deletes the entry (its tombstone: nothing reaches it). */
  const entries = new Map<IntakeId, Entry>()
  const created = new Map<IntakeSurface, Set<string>>()
  const calls: Array<IntakeCall> = []
  const downloads = { next: 1 }
  const savePathOf = (category: string) => (category === "" ? root : Path.join(root, ...category.split("/")))
  const invalid = (problem: string) => new IntakeError({ reason: "invalid", problem })
  const checkCategory = (name: string) => {
    const problem = categoryProblem(name)
    return problem === undefined ? Effect.void : Effect.fail(invalid(problem))
  }
  const view = ({ item, paused }: Entry): IntakeItem =>
    paused && item.state !== "completed" && item.state !== "failed"
      ? { ...item, state: "paused", reason: item.reason ?? "paused" }
      : item
  const update = (id: IntakeId, f: (entry: Entry) => Entry) =>
    Effect.sync(() => {
      const entry = entries.get(id)
      if (entry !== undefined) entries.set(id, f(entry))
    })
  const patchItem = (id: IntakeId, f: (item: IntakeItem) => IntakeItem) =>
    update(id, (entry) => ({ ...entry, item: f(entry.item) }))
  const record = (call: IntakeCall) => Effect.sync(() => void calls.push(call))

  const add = Effect.fnUntraced(function* (source: IntakeSource, options: AddOptions) {
    yield* record({ method: "add", args: { source, options } })
    yield* checkCategory(options.category)
    const identified = identify(source)
    if (Result.isFailure(identified)) return yield* identified.failure
    const { id } = identified.success
    const existing = entries.get(id)
    if (existing !== undefined) {
      if (existing.item.via !== options.via) {
        return yield* invalid(
          `${existing.item.name} was already added through ${existing.item.via}; remove it there first`
        )
      }
      return view(existing)
    }
    const name = options.name ?? identified.success.name
    const entry: Entry = {
      item: itemOf(
        id,
        name,
        filesOf(source, name),
        options,
        savePathOf(options.category),
        yield* Clock.currentTimeMillis
      ),
      source,
      paused: options.paused === true
    }
    entries.set(id, entry)
    return view(entry)
  })

  const each = (ids: ReadonlyArray<IntakeId>, f: (entry: Entry) => Entry) =>
    Effect.forEach(ids, (id) => update(id, f), { discard: true })

  const intake = Intake.of({
    add,
    source: (id) => Effect.sync(() => Option.fromNullishOr(entries.get(id)?.source)),
    list: (filter) =>
      Effect.sync(() =>
        [...entries.values()]
          .map(view)
          .filter(
            (item) =>
              (filter?.via === undefined || item.via === filter.via) &&
              (filter?.category === undefined || item.category === filter.category) &&
              (filter?.ids === undefined || filter.ids.includes(item.id))
          )
      ),
    remove: (ids, deleteFiles) =>
      Effect.andThen(
        record({ method: "remove", args: { ids, deleteFiles } }),
        Effect.sync(() => {
          for (const id of ids) {
            const entry = entries.get(id)
            if (entry === undefined) continue
            if (deleteFiles) Fs.rmSync(entry.item.contentPath, { recursive: true, force: true })
            entries.delete(id)
          }
        })
      ),
    pause: (ids) =>
      Effect.andThen(
        record({ method: "pause", args: ids }),
        each(ids, (entry) => ({ ...entry, paused: true }))
      ),
    resume: (ids) =>
      Effect.andThen(
        record({ method: "resume", args: ids }),
        each(ids, (entry) => ({
          ...entry,
          paused: false,
          item: entry.item.state === "paused" ? { ...entry.item, state: "queued", reason: null } : entry.item
        }))
      ),
    setCategory: (ids, category) =>
      Effect.andThen(
        Effect.andThen(record({ method: "setCategory", args: { ids, category } }), checkCategory(category)),
        // Not sent yet: it goes to the new category's folder; sent: its files stay where they are.
        each(ids, (entry) => ({
          ...entry,
          item:
            entry.item.downloadId === null
              ? moved(entry.item, category, savePathOf(category))
              : { ...entry.item, category }
        }))
      ),
    choose: (id, itemId) =>
      Effect.andThen(
        record({ method: "choose", args: { id, itemId } }),
        Effect.fail(invalid(`${id} waits for no selection`))
      ),
    categories: (via) =>
      Effect.sync(() =>
        [...new Set([...configured, ...(created.get(via) ?? [])])]
          .sort()
          .map((name) => ({ name, savePath: savePathOf(name) }))
      ),
    createCategory: (via, name) =>
      Effect.andThen(
        Effect.andThen(record({ method: "createCategory", args: name }), checkCategory(name)),
        Effect.sync(() => {
          if (name !== "") created.set(via, new Set([...(created.get(via) ?? []), name]))
        })
      ),
    removeCategories: (via, names) =>
      Effect.andThen(
        record({ method: "removeCategories", args: names }),
        Effect.sync(() => {
          for (const name of names) created.get(via)?.delete(name)
        })
      )
  })

  return {
    intake,
    items: intake.list(),
    calls: Effect.sync(() => [...calls]),
    added: Effect.sync(() => calls.flatMap((c) => (c.method === "add" ? [c.args] : []))),
    removed: Effect.sync(() => calls.flatMap((c) => (c.method === "remove" ? [c.args] : []))),
    set: (id, patch) => patchItem(id, (item) => ({ ...item, ...patch })),
    progress: (id, progress, size, etaSeconds) =>
      patchItem(id, (item) => ({
        ...item,
        state: "downloading",
        reason: null,
        progress,
        size,
        remaining: Math.round(size * (1 - progress)),
        etaSeconds,
        downloadId: item.downloadId ?? `dl-${downloads.next++}`
      })),
    fail: (id, reason) => patchItem(id, (item) => ({ ...item, state: "failed", reason })),
    complete: (id) =>
      Effect.gen(function* () {
        const entry = entries.get(id)
        if (entry === undefined) return
        const files =
          entry.item.files.length > 0
            ? entry.item.files
            : [
                {
                  name: `${Path.basename(entry.item.contentPath)}/${Path.basename(entry.item.contentPath)}.mkv`,
                  size: entry.item.size,
                  localBytes: 0
                }
              ]
        for (const file of files) {
          const path = Path.join(entry.item.savePath, file.name)
          Fs.mkdirSync(Path.dirname(path), { recursive: true })
          Fs.writeFileSync(path, "")
          Fs.truncateSync(path, file.size)
        }
        const now = yield* Clock.currentTimeMillis
        yield* patchItem(id, (item) => ({
          ...item,
          state: "completed",
          reason: null,
          progress: 1,
          size: files.reduce((n, f) => n + f.size, 0),
          remaining: 0,
          rate: 0,
          etaSeconds: 0,
          completedAt: now,
          files: files.map((f) => ({ ...f, localBytes: f.size }))
        }))
      })
  }
}

// ---------------------------------------------------------------------------------------

interface SourceFiles {
  /** Relative to the save path, "/"-separated (the release folder first when multi-file). */
  readonly files: ReadonlyArray<{ readonly name: string; readonly size: number }>
  /** The release is one file (contentPath is that file). */
  readonly single: boolean
}

/** The files a source lists: a .torrent's own, a magnet's one placeholder, none for an NZB or a URL (the service tells). */
const filesOf = (source: IntakeSource, name: string): SourceFiles => {
  const folder = releaseFolderName(name)
  switch (source._tag) {
    case "Magnet":
      return { files: [{ name: `${folder}/${folder}.mkv`, size: MAGNET_FILE_SIZE }], single: false }
    case "TorrentFile": {
      const listed = torrentFiles(source.content).files
      const single = listed.length === 1 && !listed[0]!.path.includes("/")
      return { files: listed.map((f) => ({ name: f.path.replaceAll("\\", "/"), size: f.length })), single }
    }
    case "NzbFile":
    case "Url":
      return { files: [], single: false }
  }
}

const itemOf = (
  id: IntakeId,
  name: string,
  { files, single }: SourceFiles,
  options: AddOptions,
  savePath: string,
  now: number
): IntakeItem => {
  const size = files.reduce((sum, f) => sum + f.size, 0)
  return {
    id,
    name,
    category: options.category,
    via: options.via,
    state: "queued",
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
    contentPath: Path.join(
      savePath,
      single ? (files[0]?.name ?? name) : (files[0]?.name.split("/")[0] ?? releaseFolderName(name))
    ),
    downloadId: null,
    selection: null,
    files: files.map((f) => ({ ...f, localBytes: 0 }))
  }
}

/** An unsent item in another category: its folder moves with it. */
const moved = (item: IntakeItem, category: string, savePath: string): IntakeItem => ({
  ...item,
  category,
  savePath,
  contentPath: Path.join(savePath, Path.relative(item.savePath, item.contentPath))
})
