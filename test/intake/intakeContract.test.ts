/**
 * The Intake contract over both implementations: IntakeLive over a real store (SQLite in a
 * temp folder), driven as the runner and the mirror would leave its records; and the
 * MemoryIntake every surface's test runs over, driven through its control plane.
 */
import * as Fs from "node:fs"
import { assert } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import type { RemoteItem } from "../../src/domain/RemoteItem.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { settleCompletion } from "../../src/intake/releaseCompletion.ts"
import { releaseFolderName } from "../../src/intake/releaseFolder.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Store } from "../../src/store/Store.ts"
import { tempDir } from "../store/helpers.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { intakeContract } from "./intakeContract.ts"
import { folder, intakeOverStore, landed, remoteFile, seedRemote } from "./releaseStore.ts"

/** A fresh mirror root, removed when the case ends. */
const freshRoot = Effect.acquireRelease(
  Effect.sync(() => tempDir("dlsync-contract-root-")),
  (root) => Effect.sync(() => Fs.rmSync(root, { recursive: true, force: true }))
)

intakeContract("IntakeLive over a store", (configured) =>
  Effect.gen(function* () {
    const root = yield* freshRoot
    const categories = Object.fromEntries(
      configured.map((name) => [name, { selection: "largest", cached_only: false }] as const)
    )
    const context = yield* Layer.build(intakeOverStore(root, categories)).pipe(Effect.orDie)
    const tables = Context.get(context, IntakeTables)
    const store = Context.get(context, Store)
    const events = Context.get(context, MirrorEvents)
    const record = (id: IntakeId) => Effect.map(tables.get(id), Option.getOrThrow)

    /** The service's files of a release: a video and its nfo in the release's folder, as the service lays them out. */
    const serviceFiles = Effect.fnUntraced(function* (id: IntakeId) {
      const r = yield* record(id)
      const downloadId = r.downloadId ?? assert.fail(`${id} was not sent`)
      const name = releaseFolderName(r.name)
      const base = r.sourceKind === "nzb" ? r.directory : [r.directory, name].filter((s) => s !== "").join("/")
      const folders: Array<RemoteItem> = []
      let parent: string | null = null
      for (const [i, segment] of base.split("/").entries()) {
        const folderId = `${downloadId}-d${i}`
        folders.push(folder(folderId, parent, segment))
        parent = folderId
      }
      const files = [
        { path: `${base}/${name}.mkv`, item: remoteFile(`${downloadId}-f0`, parent, `${name}.mkv`, 90, downloadId) },
        { path: `${base}/${name}.nfo`, item: remoteFile(`${downloadId}-f1`, parent, `${name}.nfo`, 10, downloadId) }
      ]
      return { folders, files }
    })

    let downloads = 0
    return {
      intake: Context.get(context, Intake),
      root,
      send: (id) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const downloadId = `dl_${++downloads}`
          yield* tables.update(id, ["new"], { phase: "sent", downloadId, status: "downloading", size: 100 }, now)
        }),
      mirror: (id, whole) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* tables.update(id, ["sent"], { status: "completed", serviceCompletedAt: now, progress: 1 }, now)
          const { folders, files } = yield* serviceFiles(id)
          yield* seedRemote([...folders, ...files.map((f) => f.item)])
          for (const file of whole ? files : files.slice(1)) yield* landed(root, file.path, file.item)
          yield* settleCompletion({ store, tables, events, root, now }, yield* record(id))
        }).pipe(Effect.provideContext(context))
    }
  })
)

intakeContract("MemoryIntake", (configured) =>
  Effect.gen(function* () {
    const root = yield* freshRoot
    const memory = makeMemoryIntake(root, configured)
    const item = (id: IntakeId) =>
      Effect.map(memory.intake.list({ ids: [id] }), (items) => items[0] ?? assert.fail(`${id} is not listed`))
    return {
      intake: memory.intake,
      root,
      send: (id) => Effect.flatMap(item(id), (i) => memory.progress(id, 0, i.size, null)),
      mirror: (id, whole) =>
        whole
          ? memory.complete(id)
          : Effect.flatMap(item(id), (i) =>
              memory.set(id, { state: "mirroring", progress: 0.75, remaining: Math.round(i.size / 4) })
            )
    }
  })
)
