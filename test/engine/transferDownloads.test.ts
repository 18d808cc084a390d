/**
 * The transfer step's crash recovery: a file the transfer engine landed in place before the
 * process died, whose landing the store never recorded, is recognised on the next pass and
 * recorded without a new download; a file the user put there meanwhile is not. And the
 * staging folder of earlier versions goes.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { FileProgress } from "../../src/appstate/FileProgress.ts"
import { remoteVersionOf } from "../../src/domain/LocalEntry.ts"
import { LEGACY_STAGING_DIR, TransferDownloads } from "../../src/engine/TransferDownloads.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Database } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import type { DownloadAction } from "../../src/sync/executor.ts"
import { LocalOps } from "../../src/sync/localOps.ts"
import { makeProgressTracker, ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import type { TransferRequest } from "../../src/transfer/TransferEngine.ts"
import { type QueuedResult, TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { ZipDownloads } from "../../src/transfer/zip/ZipDownloads.ts"
import { fid, file } from "../sync/fixtures.ts"

describe("TransferDownloads", () => {
  it.effect("records a file landed before a crash without downloading it again, and downloads one that differs", () =>
    Effect.gen(function* () {
      const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-transfer-step-"))
      const submitted: Array<TransferRequest> = []
      const queue = Layer.succeed(
        TransferQueue,
        TransferQueue.of({
          submit: (request): Effect.Effect<QueuedResult> =>
            Effect.sync(() => {
              submitted.push(request)
              return { _tag: "Parked", fileId: request.fileId, reason: "not fetched in this test", attempts: 1 }
            }),
          stats: () => ({ running: 0, queued: 0, waitingForSpace: 0 })
        })
      )
      const store = Store.layer.pipe(Layer.provideMerge(Database.layer(Path.join(root, ".state"))))
      const layer = TransferDownloads.layer.pipe(
        Layer.provide([
          queue,
          LocalOps.layer(root),
          Layer.succeed(FileProgress, FileProgress.of({ report: () => Effect.void })),
          Layer.succeed(ProgressTracker, makeProgressTracker()),
          MirrorEvents.layer,
          ZipDownloads.disabled
        ]),
        Layer.provideMerge(store)
      )
      const landed = file("a", "a.mkv", null, { size: 5 })
      const theirs = file("b", "b.mkv", null, { size: 5 })
      const download = (item: typeof landed): DownloadAction => ({
        _tag: "Download",
        path: item.name,
        item,
        replace: null,
        reason: "new on the remote"
      })
      // What a crash between the landing and its record leaves: the pending entry, and the
      // verified file in place with the remote size and mtime (b: the user's file, not ours).
      for (const [item, mtime] of [
        [landed, new Date(landed.updatedAt)],
        [theirs, new Date("2020-01-01T00:00:00Z")]
      ] as const) {
        Fs.writeFileSync(Path.join(root, item.name), "12345")
        Fs.utimesSync(Path.join(root, item.name), mtime, mtime)
      }

      const { report, a, b } = yield* Effect.gen(function* () {
        const store = yield* Store
        for (const item of [landed, theirs]) {
          yield* store.local.put({
            path: item.name,
            remoteId: item.id,
            type: "file",
            written: null,
            remote: remoteVersionOf(item),
            state: "pending",
            attempts: 0,
            lastError: null
          })
        }
        const report = yield* (yield* TransferDownloads).download([download(landed), download(theirs)])
        return {
          report,
          a: Option.getOrThrow(yield* store.local.byRemoteId(fid("a"))),
          b: Option.getOrThrow(yield* store.local.byRemoteId(fid("b")))
        }
      }).pipe(Effect.provide(layer))

      const ino = Fs.lstatSync(Path.join(root, "a.mkv"), { bigint: true }).ino
      assert.deepStrictEqual([a.state, a.written?.ino], ["synced", ino])
      assert.deepStrictEqual(
        submitted.map((r) => r.path),
        ["b.mkv"],
        "only the file that does not look landed is fetched"
      )
      assert.deepStrictEqual([b.state, b.written], ["failed", null])
      assert.deepStrictEqual([report.landed, report.failed.length], [1, 1])
      Fs.rmSync(root, { recursive: true, force: true })
    })
  )

  it.effect("removes the staging folder of earlier versions, and only it", () =>
    Effect.gen(function* () {
      const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-legacy-staging-"))
      const legacy = Path.join(root, LEGACY_STAGING_DIR, ".dlsync", "partial")
      Fs.mkdirSync(legacy, { recursive: true })
      Fs.writeFileSync(Path.join(legacy, "f1"), "old partial data")
      Fs.writeFileSync(Path.join(root, ".dlsync", "partial", "f2"), "current partial data")
      yield* Effect.gen(function* () {
        yield* TransferDownloads
      }).pipe(
        Effect.provide(
          TransferDownloads.layer.pipe(
            Layer.provide([
              Layer.mock(TransferQueue, { stats: () => ({ running: 0, queued: 0, waitingForSpace: 0 }) }),
              LocalOps.layer(root),
              Store.layer.pipe(Layer.provideMerge(Database.layer(Path.join(root, ".state")))),
              Layer.succeed(FileProgress, FileProgress.of({ report: () => Effect.void })),
              Layer.succeed(ProgressTracker, makeProgressTracker()),
              MirrorEvents.layer,
              ZipDownloads.disabled
            ])
          )
        )
      )
      assert.isFalse(Fs.existsSync(Path.join(root, LEGACY_STAGING_DIR)))
      assert.strictEqual(Fs.readFileSync(Path.join(root, ".dlsync", "partial", "f2"), "utf8"), "current partial data")
      Fs.rmSync(root, { recursive: true, force: true })
    })
  )
})
