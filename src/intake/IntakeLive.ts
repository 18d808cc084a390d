/**
 * The intake queue over the store: what every surface calls. It reads and writes records and
 * derives each release's view (releaseView.ts) from the store; the sending, the following
 * and the completion are the runner's (IntakeRunner.ts), which the process holding the
 * instance lock runs. So `add` works in any process that can open the store (`dlsync add`
 * beside a running daemon) and returns at once, and a removal's requests to the service are
 * owed in the record (`cleanup`) rather than sent here: a crash loses none of them.
 */
import * as NodePath from "node:path"
import { Clock, Effect, Layer, Option, Result } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"
import type { IntakeId } from "../domain/IntakeId.ts"
import { type IntakeRecord, IntakeTables, type SourceKind } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { categoryProblem } from "./categoryName.ts"
import {
  type AddOptions,
  Intake,
  IntakeError,
  type IntakeSource,
  type IntakeSurface,
  type ListFilter
} from "./Intake.ts"
import { IntakeSettings } from "./IntakeSettings.ts"
import { identify } from "./identity.ts"
import { releaseDirectory } from "./releaseFolder.ts"
import { releaseItems } from "./releaseItems.ts"

export const IntakeLive: Layer.Layer<Intake, never, IntakeTables | IntakeSettings | Store> = Layer.effect(
  Intake,
  Effect.gen(function* () {
    const tables = yield* IntakeTables
    const store = yield* Store
    const settings = yield* IntakeSettings
    /** The last progress shown per release, so that no reading goes below an earlier one. */
    const shown = new Map<IntakeId, number>()

    const checkCategory = (name: string) => {
      const problem = categoryProblem(name)
      return problem === undefined ? Effect.void : Effect.fail(new IntakeError({ reason: "invalid", problem }))
    }
    const LIVE = ["new", "sending", "selecting", "parked", "sent", "failed"] as const

    const views = (records: ReadonlyArray<IntakeRecord>, withFiles: boolean) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        releaseItems(records, { store, root: settings.root, now, withFiles, shown })
      )

    const add = Effect.fn("Intake.add")(function* (source: IntakeSource, options: AddOptions) {
      yield* checkCategory(options.category)
      const identified = identify(source)
      if (Result.isFailure(identified)) return yield* identified.failure
      const { id, name, infoHash } = identified.success
      const kind = SOURCE_KINDS[source._tag]
      const bytes =
        source._tag === "Magnet"
          ? new TextEncoder().encode(source.uri.trim())
          : source._tag === "Url"
            ? new TextEncoder().encode(source.url.trim())
            : source.content
      const releaseName = options.name ?? name
      const { record, created } = yield* tables.add(
        {
          id,
          name: releaseName,
          category: options.category,
          // Where it would go as things stand; the sender settles it when it sends (releaseFolder.ts).
          directory: releaseDirectory(kind, options.category, releaseName),
          directoryCategory: options.category,
          via: options.via,
          sourceKind: kind,
          fileName: source._tag === "TorrentFile" || source._tag === "NzbFile" ? source.fileName : null,
          source: bytes,
          infoHash,
          paused: options.paused === true
        },
        yield* Clock.currentTimeMillis
      )
      if (!created && record.via !== options.via) {
        return yield* new IntakeError({
          reason: "invalid",
          problem: `${record.name} was already added through ${record.via}; remove it there first`
        })
      }
      if (created)
        yield* Effect.logInfo(
          `intake: ${record.name} (${id}) added to ${options.category || "the root"} via ${options.via}`
        )
      const [item] = yield* views([record], false)
      return item ?? (yield* Effect.die(new Error(`no view of intake ${id}`)))
    })

    const list = Effect.fn("Intake.list")(function* (filter?: ListFilter) {
      const ids = filter?.ids === undefined ? undefined : new Set<string>(filter.ids)
      const records = (yield* tables.live)
        .filter((r) => filter?.via === undefined || r.via === filter.via)
        .filter((r) => filter?.category === undefined || r.category === filter.category)
        .filter((r) => ids === undefined || ids.has(r.id))
      return yield* views(records, ids !== undefined)
    })

    const source = (id: IntakeId) => Effect.map(tables.get(id), Option.flatMap(sourceOf))

    const each = (ids: ReadonlyArray<IntakeId>, change: (id: IntakeId, now: number) => Effect.Effect<unknown>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const id of ids) yield* change(id, now)
      })

    const remove = Effect.fn("Intake.remove")(function* (ids: ReadonlyArray<IntakeId>, deleteFiles: boolean) {
      yield* each(ids, (id, now) =>
        tables.update(id, LIVE, { phase: "removed", cleanup: deleteFiles ? "files" : "record", paused: false }, now)
      )
      for (const id of ids) shown.delete(id)
    })

    const pause = (ids: ReadonlyArray<IntakeId>) =>
      each(ids, (id, now) => tables.update(id, LIVE, { paused: true }, now))

    const resume = (ids: ReadonlyArray<IntakeId>) =>
      each(ids, (id, now) =>
        Effect.andThen(tables.update(id, LIVE, { paused: false }, now), () =>
          // A parked intake starts over: the selection it could not answer is gone by now.
          tables.update(id, ["parked"], { phase: "new", reason: null, notBefore: null }, now)
        )
      )

    const setCategory = Effect.fn("Intake.setCategory")(function* (ids: ReadonlyArray<IntakeId>, category: string) {
      yield* checkCategory(category)
      yield* each(ids, (id, now) =>
        Effect.gen(function* () {
          const found = yield* tables.get(id)
          if (Option.isNone(found)) return
          const r = found.value
          // Not sent yet: it goes to the new category's folder; sent: its files stay where they are.
          if (r.phase === "new" || r.phase === "parked") {
            const directory = releaseDirectory(r.sourceKind, category, r.name)
            yield* tables.update(id, ["new", "parked"], { category, directory, directoryCategory: category }, now)
          } else yield* tables.update(id, LIVE, { category }, now)
        })
      )
    })

    const choose = Effect.fn("Intake.choose")(function* (id: IntakeId, itemId: string) {
      const found = yield* tables.get(id)
      const record = Option.getOrUndefined(found)
      const offered = record?.phase === "selecting" ? record.selectionItems : null
      if (record === undefined || offered === null) {
        return yield* new IntakeError({ reason: "invalid", problem: `${id} waits for no selection` })
      }
      if (!offered.some((item) => item.itemId === itemId && item.selectable)) {
        return yield* new IntakeError({
          reason: "invalid",
          problem: `${JSON.stringify(itemId)} is not a selectable item of ${record.name}'s selection`
        })
      }
      yield* tables.update(id, ["selecting"], { selectionChoice: itemId }, yield* Clock.currentTimeMillis)
      yield* Effect.logInfo(`intake: ${record.name} (${id}): item ${itemId} chosen`)
    })

    const categories = (via: IntakeSurface) =>
      Effect.gen(function* () {
        const names = new Set([...Object.keys(settings.categories), ...(yield* tables.categories(via))])
        return [...names].sort().map((name) => ({ name, savePath: savePathOf(settings.root, name) }))
      })

    const createCategory = Effect.fn("Intake.createCategory")(function* (via: IntakeSurface, name: string) {
      yield* checkCategory(name)
      if (name !== "") yield* tables.createCategory(via, name)
    })

    const removeCategories = (via: IntakeSurface, names: ReadonlyArray<string>) =>
      Effect.forEach(names, (name) => tables.removeCategory(via, name), { discard: true })

    return Intake.of({
      add,
      list,
      source,
      remove,
      pause,
      resume,
      setCategory,
      choose,
      categories,
      createCategory,
      removeCategories
    })
  })
)

/** IntakeLive with the configuration's root and categories: what a surface's wiring provides (the store's IntakeTables and Store come with the engine). */
export const intakeLayer = (
  config: Pick<AppConfig, "mirror" | "categories" | "webhooks">
): Layer.Layer<Intake, never, IntakeTables | Store> => IntakeLive.pipe(Layer.provide(IntakeSettings.fromConfig(config)))

/** A category's folder: `<root>/<category>`. */
export const savePathOf = (root: string, category: string): string => NodePath.join(root, category)

// ---------------------------------------------------------------------------------------

/** A live record's source as it was handed in. */
const sourceOf = (record: IntakeRecord): Option.Option<IntakeSource> => {
  if (record.phase === "removed") return Option.none()
  const text = () => new TextDecoder().decode(record.source)
  switch (record.sourceKind) {
    case "magnet":
      return Option.some({ _tag: "Magnet", uri: text() })
    case "url":
      return Option.some({ _tag: "Url", url: text() })
    case "torrent":
      return Option.some({ _tag: "TorrentFile", fileName: record.fileName ?? "", content: record.source })
    case "nzb":
      return Option.some({ _tag: "NzbFile", fileName: record.fileName ?? "", content: record.source })
  }
}

const SOURCE_KINDS: Readonly<Record<IntakeSource["_tag"], SourceKind>> = {
  Magnet: "magnet",
  TorrentFile: "torrent",
  NzbFile: "nzb",
  Url: "url"
}
