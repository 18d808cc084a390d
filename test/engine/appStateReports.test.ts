/**
 * What the engine tells app state about each file: TransferDownloads (queued, downloading
 * with bytes, complete, failed with the reason) and FileProgress (time stamps, no repeats,
 * never failing the engine).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import type { FileId } from "../../src/api/schemas/common.ts"
import { AppStateWriter } from "../../src/appstate/AppStateWriter.ts"
import { FileProgress, type FileReport } from "../../src/appstate/FileProgress.ts"
import type { ProgressEntry } from "../../src/appstate/ProgressEntry.ts"
import type { LocalStat } from "../../src/domain/LocalEntry.ts"
import { PROGRESS_SAMPLE_MS, TransferDownloads } from "../../src/engine/TransferDownloads.ts"
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

const stat = (size: number): LocalStat => ({ type: "file", size, mtimeNs: 1n, ino: 7n })

const download = (id: string, path: string, size: number): DownloadAction => ({
  _tag: "Download",
  path,
  item: file(id, Path.basename(path), null, { size }),
  replace: null,
  reason: "new on the remote"
})

describe("TransferDownloads → FileProgress", () => {
  it.effect("reports queued at enqueue, downloading with its bytes, complete once landed, failed with the reason", () =>
    Effect.gen(function* () {
      const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-reports-"))
      const tracker = makeProgressTracker()
      const reports: Array<readonly [string, FileReport]> = []
      const downloading = yield* Deferred.make<void>()

      const submit = (request: TransferRequest): Effect.Effect<QueuedResult> =>
        request.fileId === "a"
          ? Effect.gen(function* () {
              const p = tracker.start(request.fileId, request.name ?? "", request.size, 0, 0)
              p.done = 400
              yield* Deferred.succeed(downloading, undefined)
              yield* Effect.sleep(PROGRESS_SAMPLE_MS * 1.5)
              tracker.end(p, "completed")
              return {
                _tag: "Completed",
                fileId: "a",
                path: request.path,
                written: stat(1000),
                fetched: 1000,
                attempts: 1
              }
            })
          : Effect.succeed({ _tag: "Parked", fileId: request.fileId, reason: "gone on the CDN", attempts: 3 })
      const queue = Layer.succeed(
        TransferQueue,
        TransferQueue.of({ submit, stats: () => ({ running: 0, queued: 0, waitingForSpace: 0 }) })
      )
      const ops = Layer.mock(LocalOps, {
        root,
        lstat: () => Effect.succeed(undefined)
      })
      // A real, empty store: no entry records an earlier landing.
      const store = Store.layer.pipe(Layer.provideMerge(Database.layer(Path.join(root, "state"))))
      const progress = Layer.succeed(
        FileProgress,
        FileProgress.of({ report: (id, r) => Effect.sync(() => void reports.push([id, r])) })
      )
      const layer = TransferDownloads.layer.pipe(
        Layer.provide([
          queue,
          ops,
          progress,
          Layer.succeed(ProgressTracker, tracker),
          MirrorEvents.layer,
          ZipDownloads.disabled
        ]),
        Layer.provideMerge(store)
      )

      const drained = yield* Effect.forkChild(
        Effect.gen(function* () {
          const report = yield* (yield* TransferDownloads).download([
            download("a", "Movies/a.mkv", 1000),
            download("b", "b.txt", 1000)
          ])
          const store = yield* Store
          return {
            report,
            a: Option.getOrThrow(yield* store.local.byRemoteId(fid("a"))),
            b: Option.getOrThrow(yield* store.local.byRemoteId(fid("b")))
          }
        }).pipe(Effect.provide(layer))
      )
      // "a" downloads for one and a half sampling intervals: sampled once on the way.
      yield* Deferred.await(downloading)
      yield* TestClock.adjust(PROGRESS_SAMPLE_MS)
      yield* TestClock.adjust(PROGRESS_SAMPLE_MS / 2)
      const { report, a, b } = yield* Fiber.join(drained)

      assert.strictEqual(report.landed, 1)
      assert.deepStrictEqual([a.state, a.written], ["synced", { size: 1000, mtimeNs: 1n, ino: 7n }])
      assert.deepStrictEqual([b.state, b.lastError], ["failed", "gone on the CDN"])
      const of = (id: string) => reports.filter(([f]) => f === id).map(([, r]) => r)
      assert.deepStrictEqual(of("a"), [
        { state: "queued", bytes: 0, size: 1000, path: "Movies/a.mkv" },
        { state: "downloading", bytes: 400, size: 1000, path: "Movies/a.mkv" },
        { state: "complete", bytes: 1000, size: 1000, path: "Movies/a.mkv" }
      ])
      assert.deepStrictEqual(of("b"), [
        { state: "queued", bytes: 0, size: 1000, path: "b.txt" },
        { state: "failed", bytes: 0, size: 1000, path: "b.txt", error: "gone on the CDN" }
      ])
      Fs.rmSync(root, { recursive: true, force: true })
    })
  )
})

describe("FileProgress", () => {
  const writerInto = (sink: Array<readonly [FileId, ProgressEntry]>, failing = false) =>
    Layer.succeed(
      AppStateWriter,
      AppStateWriter.of({
        report: (id, entry) =>
          failing ? Effect.die(new Error("disk full")) : Effect.sync(() => void sink.push([id, entry])),
        drain: Effect.succeed(true),
        drainWithin: () => Effect.succeed(true),
        stats: Effect.die("unused")
      })
    )

  it.effect("stamps the time, and does not repeat an entry equal to the file's last one", () =>
    Effect.gen(function* () {
      const sink: Array<readonly [FileId, ProgressEntry]> = []
      yield* Effect.gen(function* () {
        const progress = yield* FileProgress
        const locked: FileReport = { state: "locked", bytes: 0, size: 5, path: "x", error: "locked" }
        yield* progress.report(fid("f"), locked)
        yield* progress.report(fid("f"), locked)
        yield* progress.report(fid("f"), { ...locked, state: "skipped" })
        yield* progress.report(fid("f"), locked)
      }).pipe(Effect.provide(FileProgress.layer.pipe(Layer.provide(writerInto(sink)))))
      assert.deepStrictEqual(
        sink.map(([id, e]) => `${id} ${e.state} ${e.updated_at}`),
        ["f locked", "f skipped", "f locked"].map((s) => `${s} 1970-01-01T00:00:00.000Z`)
      )
    })
  )

  it.effect("drops a progress sample that comes after the file's final entry", () =>
    Effect.gen(function* () {
      const sink: Array<readonly [FileId, ProgressEntry]> = []
      yield* Effect.gen(function* () {
        const progress = yield* FileProgress
        const at = (state: FileReport["state"], bytes: number): FileReport => ({ state, bytes, size: 9, path: "x" })
        yield* progress.report(fid("f"), at("downloading", 1))
        yield* progress.report(fid("f"), at("queued", 0))
        yield* progress.report(fid("f"), at("downloading", 3))
        yield* progress.report(fid("f"), at("complete", 9))
        yield* progress.report(fid("f"), at("downloading", 9))
      }).pipe(Effect.provide(FileProgress.layer.pipe(Layer.provide(writerInto(sink)))))
      assert.deepStrictEqual(
        sink.map(([, e]) => `${e.state} ${e.bytes}`),
        ["queued 0", "downloading 3", "complete 9"]
      )
    })
  )

  it.effect("never fails the engine: a writer defect is logged and the report returns", () =>
    Effect.gen(function* () {
      yield* Effect.gen(function* () {
        const progress = yield* FileProgress
        yield* progress.report(fid("f"), { state: "complete", bytes: 1, size: 1, path: "x" })
        yield* progress.report(fid("g"), { state: "complete", bytes: 1, size: 1, path: "y" })
      }).pipe(Effect.provide(FileProgress.layer.pipe(Layer.provide(writerInto([], true)))))
    })
  )
})
