/**
 * The intake queue over the store (IntakeTables): what every surface calls. It only reads
 * and writes records; the sending, the polling and the local verification are the
 * runner's (IntakeRunner.ts), which the process holding the instance lock runs. So `add`
 * works in any process that can open the store (`dlsync add` beside a running daemon) and
 * returns at once, and a removal's requests to the service are owed in the record
 * (`cleanup`) rather than sent here: a crash loses none of them.
 */
import { Clock, Effect, Layer, Result } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"
import type { IntakeId } from "../domain/IntakeId.ts"
import { type IntakeRecord, IntakeTables, type SourceKind } from "../store/intakeTables.ts"
import { categoryProblem } from "./categoryName.ts"
import { type AddOptions, Intake, IntakeError, type IntakeItem, type IntakeSource, type ListFilter } from "./Intake.ts"
import { IntakeSettings } from "./IntakeSettings.ts"
import { identify } from "./identity.ts"
import { itemOf, savePathOf } from "./itemView.ts"

export const IntakeLive: Layer.Layer<Intake, never, IntakeTables | IntakeSettings> = Layer.effect(
  Intake,
  Effect.gen(function* () {
    const tables = yield* IntakeTables
    const settings = yield* IntakeSettings
    const view = (record: IntakeRecord, now: number): IntakeItem => itemOf(record, settings.root, now)
    const checkCategory = (name: string) => {
      const problem = categoryProblem(name)
      return problem === undefined ? Effect.void : Effect.fail(new IntakeError({ reason: "invalid", problem }))
    }
    const LIVE = ["new", "sending", "selecting", "parked", "sent", "failed"] as const

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
      const { record, created } = yield* tables.add(
        {
          id,
          name,
          category: options.category,
          // An NZB's files come loose: its own folder keeps contentPath apart from savePath (as SABnzbd's job folder).
          directory: directoryFor(kind, options.category, name),
          via: options.via,
          sourceKind: kind,
          fileName: source._tag === "TorrentFile" || source._tag === "NzbFile" ? source.fileName : null,
          source: bytes,
          infoHash,
          paused: options.paused === true
        },
        yield* Clock.currentTimeMillis
      )
      if (created)
        yield* Effect.logInfo(`intake: ${name} (${id}) added to ${options.category || "the root"} via ${options.via}`)
      return view(record, yield* Clock.currentTimeMillis)
    })

    const list = Effect.fn("Intake.list")(function* (filter?: ListFilter) {
      const ids = filter?.ids === undefined ? undefined : new Set<string>(filter.ids)
      const now = yield* Clock.currentTimeMillis
      return (yield* tables.live)
        .filter((r) => filter?.category === undefined || r.category === filter.category)
        .filter((r) => ids === undefined || ids.has(r.id))
        .map((record) => view(record, now))
    })

    const each = (ids: ReadonlyArray<IntakeId>, change: (id: IntakeId, now: number) => Effect.Effect<unknown>) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        for (const id of ids) yield* change(id, now)
      })

    const remove = Effect.fn("Intake.remove")(function* (ids: ReadonlyArray<IntakeId>, deleteFiles: boolean) {
      yield* each(ids, (id, now) =>
        tables.update(id, LIVE, { phase: "removed", cleanup: deleteFiles ? "files" : "record", paused: false }, now)
      )
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
          // Not sent yet: it goes to the new category's folder; sent: its files stay where they are.
          const unsent = yield* tables.get(id)
          if (unsent._tag === "Some" && (unsent.value.phase === "new" || unsent.value.phase === "parked")) {
            const r = unsent.value
            yield* tables.update(
              id,
              ["new", "parked"],
              { category, directory: directoryFor(r.sourceKind, category, r.name) },
              now
            )
          } else yield* tables.update(id, LIVE, { category }, now)
        })
      )
    })

    const categories = Effect.gen(function* () {
      const names = new Set([...Object.keys(settings.categories), ...(yield* tables.categories)])
      return [...names].sort().map((name) => ({ name, savePath: savePathOf(settings.root, name) }))
    })

    const createCategory = Effect.fn("Intake.createCategory")(function* (name: string) {
      yield* checkCategory(name)
      if (name !== "") yield* tables.createCategory(name)
    })

    const removeCategories = (names: ReadonlyArray<string>) =>
      Effect.forEach(names, (name) => tables.removeCategory(name), { discard: true })

    return Intake.of({ add, list, remove, pause, resume, setCategory, categories, createCategory, removeCategories })
  })
)

/** IntakeLive with the configuration's root and categories: what a surface's wiring provides (the store's IntakeTables comes with the engine). */
export const intakeLayer = (
  config: Pick<AppConfig, "mirror" | "categories" | "webhooks">
): Layer.Layer<Intake, never, IntakeTables> => IntakeLive.pipe(Layer.provide(IntakeSettings.fromConfig(config)))

// ---------------------------------------------------------------------------------------

const SOURCE_KINDS: Readonly<Record<IntakeSource["_tag"], SourceKind>> = {
  Magnet: "magnet",
  TorrentFile: "torrent",
  NzbFile: "nzb",
  Url: "url"
}

/** The service folder the download is created in. */
export const directoryFor = (kind: SourceKind, category: string, name: string): string => {
  if (kind !== "nzb") return category
  const cleaned = name.replaceAll("/", "_").trim()
  const folder = cleaned === "" || cleaned === "." || cleaned === ".." ? "_" : cleaned
  return category === "" ? folder : `${category}/${folder}`
}
