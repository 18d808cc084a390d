/**
 * The cleanup step on the TestClock, over a real store, a real mirror root and the emulator
 * over HTTP: the age rule (verified for `after`; a local change stops it), batches of at
 * most 100 ids per POST /files/delete, the big-delete gate, and the daemon's backoff after
 * resource_locked.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, PubSub, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { RunKind } from "../../src/appstate/mirrorAppState.ts"
import { batches, DELETE_BATCH, inCleanupFolders, isOldEnough, RETRY_MAX_MS } from "../../src/cleanup/cleanupRules.ts"
import { cleanupStep } from "../../src/cleanup/RemoteCleanup.ts"
import type { FileId } from "../../src/domain/FileId.ts"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"
import { RemoteSync } from "../../src/engine/RemoteSync.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { toLocalStat } from "../../src/fs/localStat.ts"
import { Posters } from "../../src/posters/Posters.ts"
import { makeAppStateOutboxTable } from "../../src/store/appStateOutboxTable.ts"
import { Database } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import { LocalOps } from "../../src/sync/localOps.ts"

let emu: RunningEmulator | undefined
const dirs: Array<string> = []
afterEach(async () => {
  await emu?.close()
  emu = undefined
  for (const d of dirs.splice(0)) Fs.rmSync(d, { recursive: true, force: true })
})

const AFTER = 60_000
const SETTINGS = { after: AFTER, folders: ["Movies"] }

/** `count` files in Movies on the service, mirrored on disk and in the store as synced entries. */
const setup = (count: number) =>
  Effect.gen(function* () {
    const e = yield* Effect.promise(() => startEmulator({ library: "empty", control: true }))
    emu = e
    const movies = e.control.addFolder({ name: "Movies", parentId: null })
    const ids = Array.from(
      { length: count },
      (_, i) => e.control.addFile({ name: `${i}.mkv`, parentId: movies.id, sizeBytes: 1 }).id
    )
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-cleanup-"))
    dirs.push(dir)
    const root = Path.join(dir, "root")
    Fs.mkdirSync(Path.join(root, "Movies"), { recursive: true })
    const layer = RemoteSync.layer.pipe(
      Layer.provideMerge(Store.layer),
      Layer.provideMerge(Database.layer(Path.join(dir, "state"))),
      Layer.provideMerge(
        ApiClient.layerLive({ baseUrl: e.baseUrl, authUrl: e.authUrl }).pipe(
          Layer.provide([Credentials.apiKey(Redacted.make(e.accessToken)), ApiObserver.none])
        )
      ),
      Layer.provideMerge(LocalOps.layer(root)),
      Layer.provideMerge(MirrorEvents.layer),
      Layer.provideMerge(RunKind.daemon),
      Layer.provide(Posters.off)
    )
    return { e, ids, root, layer }
  })

const mirror = (root: string) =>
  Effect.gen(function* () {
    yield* (yield* RemoteSync).catchUp({ fullListing: true, probeFeed: true })
    const store = yield* Store
    for (const item of yield* store.remote.all) {
      if (item.type !== "file") continue
      const path = `Movies/${item.name}`
      Fs.writeFileSync(Path.join(root, path), "x")
      const stat = toLocalStat(Fs.lstatSync(Path.join(root, path), { bigint: true }))
      yield* store.local.put({
        path,
        remoteId: item.id,
        type: "file",
        written: { size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino },
        remote: { size: item.size, updatedAt: item.updatedAt, name: item.name, parentId: item.parentId },
        state: "synced",
        attempts: 0,
        lastError: null
      })
    }
  })

const posts = (e: RunningEmulator) =>
  e.control.requests({ origin: "api" }).filter((r) => r.method === "POST" && r.path === "/api/v1/files/delete")

describe("cleanup rules", () => {
  it("folders, age and batches", () => {
    assert.isTrue(inCleanupFolders("Movies/a.mkv", ["Movies"]))
    assert.isTrue(inCleanupFolders("Movies/x/a.mkv", ["TV", "Movies"]))
    assert.isFalse(inCleanupFolders("Movies", ["Movies"]))
    assert.isFalse(inCleanupFolders("Movies2/a.mkv", ["Movies"]))
    assert.isFalse(isOldEnough(1_000, 1_000 + AFTER - 1, AFTER))
    assert.isTrue(isOldEnough(1_000, 1_000 + AFTER, AFTER))
    assert.deepStrictEqual(
      batches(Array.from({ length: 250 }, (_, i) => i)).map((b) => b.length),
      [DELETE_BATCH, DELETE_BATCH, 50]
    )
    assert.deepStrictEqual(batches([]), [])
  })
})

describe("cleanupStep", { timeout: 60_000 }, () => {
  it.effect(
    "deletes after `after` of verification, in batches of 100; a file changed locally is never cleaned up",
    () =>
      Effect.gen(function* () {
        const { e, ids, root, layer } = yield* setup(150)
        yield* Effect.gen(function* () {
          yield* mirror(root)
          const step = cleanupStep(SETTINGS, null, { allowBigDelete: true })
          assert.deepStrictEqual(yield* step, { deleted: 0, waiting: 0, held: null })
          yield* TestClock.adjust(AFTER / 2)
          // Changed locally halfway: its age starts again once it is verified again.
          const changed = Path.join(root, "Movies/0.mkv")
          Fs.appendFileSync(changed, "mine")
          yield* step
          yield* TestClock.adjust(AFTER / 2 - 1)
          assert.strictEqual((yield* step).deleted, 0)
          assert.strictEqual(posts(e).length, 0)
          yield* TestClock.adjust(1)
          const report = yield* step
          assert.strictEqual(report.deleted, 149)
          assert.deepStrictEqual(
            posts(e).map((r) => r.path),
            ["/api/v1/files/delete", "/api/v1/files/delete"]
          )
          const first = ids[0] as FileId
          assert.isDefined(e.control.item(first), "changed locally: kept on the service")
          assert.strictEqual(ids.filter((id) => e.control.item(id) !== undefined).length, 1)
          // Still changed: never cleaned up, however long.
          yield* TestClock.adjust(10 * AFTER)
          assert.strictEqual((yield* step).deleted, 0)
          assert.isDefined(e.control.item(first))
        }).pipe(Effect.provide(layer))
      })
  )

  it.effect("holds a cleanup over the big-delete gate; allowed, it goes ahead", () =>
    Effect.gen(function* () {
      const { e, ids, root, layer } = yield* setup(60)
      yield* Effect.gen(function* () {
        yield* mirror(root)
        yield* cleanupStep(SETTINGS, null, { allowBigDelete: false })
        yield* TestClock.adjust(AFTER)
        // Announced (deletion_held) once while the same hold stays.
        const announced = yield* Ref.make("")
        const published: Array<MirrorEvent> = []
        const events = Layer.succeed(MirrorEvents, {
          publish: (event) => Effect.sync(() => void published.push(event)),
          subscribe: Effect.flatMap(PubSub.bounded<MirrorEvent>(1), PubSub.subscribe)
        })
        const holding = cleanupStep(SETTINGS, null, { allowBigDelete: false, announced }).pipe(Effect.provide(events))
        const held = yield* holding
        yield* holding
        assert.deepStrictEqual(
          published.map((event) => event._tag),
          ["deletion_held"]
        )
        assert.deepStrictEqual(held.held?.count, 60)
        assert.strictEqual((yield* (yield* Store).held.list).length, 60)
        assert.strictEqual(posts(e).length, 0)
        const capped = yield* cleanupStep(SETTINGS, 100, { allowBigDelete: false })
        assert.isNull(capped.held)
        assert.strictEqual(capped.deleted, 60)
        assert.isTrue(ids.every((id) => e.control.item(id) === undefined))
      }).pipe(Effect.provide(layer))
    })
  )

  it.effect("resource_locked waits with backoff in the daemon, then is retried", () =>
    Effect.gen(function* () {
      const { e, ids, root, layer } = yield* setup(2)
      yield* Effect.gen(function* () {
        yield* mirror(root)
        const locked = ids[0] as FileId
        e.control.lock(locked)
        const step = cleanupStep(SETTINGS, null, { allowBigDelete: false })
        yield* step
        yield* TestClock.adjust(AFTER)
        const first = yield* step
        assert.strictEqual(first.deleted, 1)
        assert.strictEqual(first.waiting, 1)
        assert.strictEqual(posts(e).length, 1)
        e.control.unlock(locked)
        // Retried only once its backoff has passed.
        yield* step
        assert.strictEqual(posts(e).length, 1)
        yield* TestClock.adjust(RETRY_MAX_MS)
        assert.strictEqual((yield* step).deleted, 1)
        assert.strictEqual(posts(e).length, 2)
        assert.isUndefined(e.control.item(locked))
      }).pipe(Effect.provide(layer))
    })
  )

  it.effect("never cleans up a file this device's app state does not show complete", () =>
    Effect.gen(function* () {
      const { e, ids, root, layer } = yield* setup(2)
      yield* Effect.gen(function* () {
        yield* mirror(root)
        const { db } = yield* Database
        const failing = ids[0] as FileId
        const entry = {
          state: "failed",
          bytes: 0,
          size: 1,
          path: "Movies/0.mkv",
          updated_at: "2026-01-01T00:00:00Z",
          error: "x"
        }
        makeAppStateOutboxTable(db).upsert(failing, JSON.stringify(entry), 0)
        const step = cleanupStep(SETTINGS, null, { allowBigDelete: false })
        yield* step
        yield* TestClock.adjust(AFTER)
        assert.strictEqual((yield* step).deleted, 1)
        assert.isDefined(e.control.item(failing), "not complete in the app state: kept on the service")
        assert.isUndefined(e.control.item(ids[1] as FileId))
      }).pipe(Effect.provide(layer))
    })
  )
})
