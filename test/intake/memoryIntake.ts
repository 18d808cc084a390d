/**
 * An in-memory Intake for the surfaces' tests, honouring the contract (src/intake/Intake.ts):
 * one item per identity (a re-add returns it), a removal tombstones the identity, an
 * unreadable source is `invalid`, `completed` only with every file's bytes local. Its control
 * plane moves items through their life as the queue would (`progress`, `complete`, `fail`).
 */
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { Effect, Option, Ref } from "effect"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { type AddOptions, Intake, IntakeError, type IntakeItem, type IntakeSource } from "../../src/intake/Intake.ts"

export interface MemoryIntake {
  readonly intake: Intake["Service"]
  readonly items: Effect.Effect<ReadonlyArray<IntakeItem>>
  readonly added: Effect.Effect<ReadonlyArray<{ readonly source: IntakeSource; readonly options: AddOptions }>>
  readonly removed: Effect.Effect<
    ReadonlyArray<{ readonly ids: ReadonlyArray<IntakeId>; readonly deleteFiles: boolean }>
  >
  /** The service fetches it: `downloading` with this progress and size. */
  progress(id: IntakeId, progress: number, size: number, etaSeconds: number | null): Effect.Effect<void>
  /** Every byte verified locally at `<root>/<category>/<name>`. */
  complete(id: IntakeId, at: number): Effect.Effect<void>
  fail(id: IntakeId, reason: string, at: number): Effect.Effect<void>
}

export const makeMemoryIntake = (root: string, configuredCategories: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const items = yield* Ref.make<ReadonlyArray<IntakeItem>>([])
    const tombstones = new Set<string>()
    const added: Array<{ source: IntakeSource; options: AddOptions }> = []
    const removed: Array<{ ids: ReadonlyArray<IntakeId>; deleteFiles: boolean }> = []
    const categories = new Set(configuredCategories)
    const savePath = (category: string) => (category === "" ? root : NodePath.join(root, category))
    const update = (id: IntakeId, f: (item: IntakeItem) => IntakeItem) =>
      Ref.update(items, (all) => all.map((item) => (item.id === id ? f(item) : item)))

    const sources = new Map<string, IntakeSource>()
    const intake = Intake.of({
      source: (id) =>
        Effect.map(Ref.get(items), (all) =>
          all.some((i) => i.id === id) ? Option.fromNullishOr(sources.get(id)) : Option.none()
        ),
      add: (source, options) =>
        Effect.gen(function* () {
          added.push({ source, options })
          const identity = identityOf(source)
          if (identity === undefined) {
            return yield* new IntakeError({ reason: "invalid", problem: `not a readable ${source._tag}` })
          }
          tombstones.delete(identity.id)
          if (!sources.has(identity.id)) sources.set(identity.id, source)
          const existing = (yield* Ref.get(items)).find((i) => i.id === identity.id)
          if (existing !== undefined) return existing
          const name = options.name ?? identity.name
          const item: IntakeItem = {
            id: identity.id,
            name,
            category: options.category,
            via: options.via,
            state: options.paused ? "paused" : "queued",
            reason: options.paused ? "added paused" : "waiting for a free download slot",
            progress: 0,
            size: 0,
            remaining: 0,
            rate: 0,
            etaSeconds: null,
            addedAt: added.length * 1000,
            completedAt: null,
            expectedStartAt: null,
            savePath: savePath(options.category),
            contentPath: NodePath.join(savePath(options.category), name),
            downloadId: null,
            selection: null,
            files: []
          }
          yield* Ref.update(items, (all) => [...all, item])
          return item
        }),
      list: (filter) =>
        Effect.map(Ref.get(items), (all) =>
          all.filter(
            (i) =>
              (filter?.via === undefined || i.via === filter.via) &&
              (filter?.category === undefined || i.category === filter.category) &&
              (filter?.ids === undefined || filter.ids.includes(i.id))
          )
        ),
      remove: (ids, deleteFiles) =>
        Effect.sync(() => {
          removed.push({ ids, deleteFiles })
          for (const id of ids) tombstones.add(id)
        }).pipe(Effect.andThen(Ref.update(items, (all) => all.filter((i) => !ids.includes(i.id))))),
      pause: (ids) =>
        Effect.forEach(
          ids,
          (id) =>
            update(id, (i) => (i.state === "queued" || i.state === "downloading" ? { ...i, state: "paused" } : i)),
          { discard: true }
        ),
      resume: (ids) =>
        Effect.forEach(ids, (id) => update(id, (i) => (i.state === "paused" ? { ...i, state: "queued" } : i)), {
          discard: true
        }),
      setCategory: (ids, category) =>
        Effect.forEach(ids, (id) => update(id, (i) => ({ ...i, category, savePath: savePath(category) })), {
          discard: true
        }),
      choose: (id) => Effect.fail(new IntakeError({ reason: "invalid", problem: `${id} waits for no selection` })),
      categories: () => Effect.sync(() => [...categories].map((name) => ({ name, savePath: savePath(name) }))),
      createCategory: (_via, name) => Effect.sync(() => void categories.add(name)),
      removeCategories: (_via, names) =>
        Effect.sync(() => {
          for (const n of names) categories.delete(n)
        })
    })

    const memory: MemoryIntake = {
      intake,
      items: Ref.get(items),
      added: Effect.sync(() => [...added]),
      removed: Effect.sync(() => [...removed]),
      progress: (id, progress, size, etaSeconds) =>
        update(id, (i) => ({
          ...i,
          state: "downloading",
          reason: null,
          progress,
          size,
          remaining: Math.round(size * (1 - progress)),
          etaSeconds,
          downloadId: "dl-1"
        })),
      complete: (id, at) =>
        update(id, (i) => ({
          ...i,
          state: "completed",
          progress: 1,
          remaining: 0,
          etaSeconds: 0,
          completedAt: at,
          files: [{ name: `${i.name}/${i.name}.mkv`, size: i.size, localBytes: i.size }]
        })),
      fail: (id, reason, at) => update(id, (i) => ({ ...i, state: "failed", reason, completedAt: at }))
    }
    return memory
  })

// ---------------------------------------------------------------------------------------

const identityOf = (source: IntakeSource): { id: IntakeId; name: string } | undefined => {
  switch (source._tag) {
    case "Magnet": {
      const hash = /xt=urn:btih:([0-9a-f]{40})/i.exec(source.uri)?.[1]
      const name = /[?&]dn=([^&]*)/.exec(source.uri)?.[1]
      return hash === undefined
        ? undefined
        : { id: asId(`btih:${hash.toLowerCase()}`), name: decodeURIComponent(name ?? hash) }
    }
    case "NzbFile": {
      const text = new TextDecoder().decode(source.content)
      if (!text.includes("<nzb")) return undefined
      return { id: asId(`sha256:${sha256(source.content)}`), name: source.fileName.replace(/\.nzb$/i, "") }
    }
    case "TorrentFile":
      return source.content.length === 0
        ? undefined
        : { id: asId(`btih:${sha256(source.content).slice(0, 40)}`), name: source.fileName.replace(/\.torrent$/i, "") }
    case "Url":
      return /^https?:\/\//.test(source.url)
        ? {
            id: asId(`sha256:${sha256(new TextEncoder().encode(source.url))}`),
            name: source.url.split("/").pop() ?? source.url
          }
        : undefined
  }
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

const asId = (text: string): IntakeId => IntakeId.make(text)
