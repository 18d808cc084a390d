/**
 * verifyLocal, the one place an intake becomes complete: never while a file of its download
 * is not verified on disk (an empty one included), and its progress counts the bytes the
 * running transfer of a long file has so far.
 */
import * as Path from "node:path"
import { assert, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { ApiClient } from "../../src/api/ApiClient.ts"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { verifyLocal } from "../../src/intake/intakeProgress.ts"
import { type IntakeFile, IntakeTables } from "../../src/store/intakeTables.ts"
import { LIVE_TRANSFERS_MAX_AGE_MS } from "../../src/store/liveTransfers.ts"
import { Store } from "../../src/store/Store.ts"
import { storeLayer, tempDir } from "../store/helpers.ts"

const ID = "btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a" as IntakeId
const NOW = Date.parse("2026-11-25T12:00:00Z")

const tables = () => IntakeTables.layer.pipe(Layer.provideMerge(storeLayer(Path.join(tempDir(), "state"))))

/** An intake the service completed, with these files, none of them mirrored yet; then one verifyLocal. */
const verifiedWith = (files: ReadonlyArray<IntakeFile>) =>
  Effect.gen(function* () {
    const intakes = yield* IntakeTables
    const store = yield* Store
    yield* intakes.add(
      {
        id: ID,
        name: "Show",
        category: "tv",
        directory: "tv",
        via: "test",
        sourceKind: "magnet",
        fileName: null,
        source: new Uint8Array(),
        infoHash: null,
        paused: false
      },
      NOW
    )
    yield* intakes.update(ID, ["new"], { phase: "sent", downloadId: "dl_1", status: "completed", files }, NOW)
    const record = Option.getOrThrow(yield* intakes.get(ID))
    const ctx = { api: {} as ApiClient["Service"], tables: intakes, store, root: tempDir(), now: NOW }
    yield* verifyLocal(ctx, record)
    return Option.getOrThrow(yield* intakes.get(ID))
  })

it.effect("an empty file not on disk: not complete", () =>
  Effect.gen(function* () {
    const record = yield* verifiedWith([{ remoteId: "fil_empty", path: "Show/Show.nfo", size: 0, localBytes: 0 }])
    assert.isNull(record.completedAt)
    assert.strictEqual(record.progress, 0)
  }).pipe(Effect.provide(tables()))
)

it.effect("a long file being transferred: its bytes so far count in progress, never as complete", () =>
  Effect.gen(function* () {
    const store = yield* Store
    const live = (updatedAt: number, bytes: number) =>
      store.liveTransfers.publish({
        pid: process.pid,
        updatedAt: new Date(updatedAt).toISOString(),
        completed: 0,
        parked: 0,
        bytesPerSecond: 1000,
        waitingForSpace: 0,
        files: [{ fileId: "fil_big", path: "tv/Show/Show.mkv", size: 1000, bytes, bytesPerSecond: 1000 }]
      })
    yield* live(NOW - 1000, 600)
    const files = [
      { remoteId: "fil_big", path: "Show/Show.mkv", size: 1000, localBytes: 0 },
      { remoteId: "fil_srt", path: "Show/Show.srt", size: 1000, localBytes: 0 }
    ]
    const record = yield* verifiedWith(files)
    assert.strictEqual(record.progress, 0.3)
    assert.deepStrictEqual(
      record.files?.map((f) => f.localBytes),
      [600, 0]
    )
    assert.isNull(record.completedAt)
  }).pipe(Effect.provide(tables()))
)

it.effect("transferred to the last byte but not yet in place: below its size, not complete", () =>
  Effect.gen(function* () {
    const store = yield* Store
    const files = [{ remoteId: "fil_big", path: "Show/Show.mkv", size: 1000, localBytes: 0 }]
    yield* store.liveTransfers.publish({
      pid: process.pid,
      updatedAt: new Date(NOW).toISOString(),
      completed: 0,
      parked: 0,
      bytesPerSecond: 0,
      waitingForSpace: 0,
      files: [{ fileId: "fil_big", path: "tv/Show/Show.mkv", size: 1000, bytes: 1000, bytesPerSecond: 0 }]
    })
    const record = yield* verifiedWith(files)
    assert.strictEqual(record.files?.[0]?.localBytes, 999)
    assert.isNull(record.completedAt)
  }).pipe(Effect.provide(tables()))
)

it.effect("a snapshot older than LIVE_TRANSFERS_MAX_AGE_MS (a stopped publisher) counts nothing", () =>
  Effect.gen(function* () {
    const store = yield* Store
    yield* store.liveTransfers.publish({
      pid: process.pid,
      updatedAt: new Date(NOW - LIVE_TRANSFERS_MAX_AGE_MS - 1).toISOString(),
      completed: 0,
      parked: 0,
      bytesPerSecond: 0,
      waitingForSpace: 0,
      files: [{ fileId: "fil_big", path: "tv/Show/Show.mkv", size: 1000, bytes: 500, bytesPerSecond: 0 }]
    })
    const record = yield* verifiedWith([{ remoteId: "fil_big", path: "Show/Show.mkv", size: 1000, localBytes: 0 }])
    assert.strictEqual(record.files?.[0]?.localBytes, 0)
    assert.strictEqual(record.progress, 0)
  }).pipe(Effect.provide(tables()))
)
