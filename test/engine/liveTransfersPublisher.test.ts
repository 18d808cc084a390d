/**
 * The publisher of the transfers under way: what it writes from the tracker, how often,
 * and that a run starts and ends with nothing published (TestClock, no waits).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { liveTransfersPublisher } from "../../src/engine/liveTransfersPublisher.ts"
import { Store } from "../../src/store/Store.ts"
import { makeProgressTracker, ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { TransferQueue } from "../../src/transfer/TransferQueue.ts"

/** What the stand-in queue reports; a test sets waitingForSpace. */
const queueStats = { running: 0, queued: 0, waitingForSpace: 0 }

import { tempDir, withStore } from "../store/helpers.ts"

describe("liveTransfersPublisher", () => {
  it.effect(
    "publishes the files under way once a second; clears when they end, at start and at the end of the run",
    () =>
      withStore(
        tempDir(),
        Effect.gen(function* () {
          const store = yield* Store
          const tracker = makeProgressTracker()
          const published = store.liveTransfers.read.pipe(Effect.map(Option.getOrUndefined))
          // What a killed run left behind.
          yield* store.liveTransfers.publish({
            pid: 1,
            updatedAt: "2024-01-01T00:00:00.000Z",
            completed: 0,
            parked: 0,
            bytesPerSecond: 9,
            files: [{ fileId: "old", path: "old.mkv", size: 10, bytes: 5, bytesPerSecond: 9 }],
            waitingForSpace: 0
          })

          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* Layer.build(liveTransfersPublisher).pipe(
                Effect.provide([
                  Layer.succeed(ProgressTracker, ProgressTracker.of(tracker)),
                  Layer.succeed(
                    TransferQueue,
                    TransferQueue.of({ submit: () => Effect.die("unused"), stats: () => ({ ...queueStats }) })
                  )
                ])
              )
              yield* Effect.yieldNow
              assert.isUndefined(yield* published, "a killed run's leftover is cleared at start")

              const big = tracker.start("f1", "Movies/big.mkv", 10_000, 1_000, 0)
              yield* TestClock.adjust("999 millis")
              assert.isUndefined(yield* published, "not before the interval")
              yield* TestClock.adjust("1 millis")
              const first = yield* published
              assert.strictEqual(first?.pid, process.pid)
              assert.strictEqual(first?.updatedAt, "1970-01-01T00:00:01.000Z")
              assert.deepStrictEqual(first?.files, [
                { fileId: "f1", path: "Movies/big.mkv", size: 10_000, bytes: 1_000, bytesPerSecond: 0, connections: 0 }
              ])

              big.done += 500
              big.fetched += 500
              big.connections = 3
              yield* TestClock.adjust("1 second")
              const second = yield* published
              assert.strictEqual(second?.files[0]?.bytes, 1_500)
              assert.strictEqual(second?.files[0]?.bytesPerSecond, 500, "500 bytes in the second since the last sample")
              assert.strictEqual(second?.files[0]?.connections, 3)
              assert.isUndefined(second?.files[0]?.attempts, "no failed attempt yet")

              tracker.emit({
                _tag: "Retrying",
                fileId: "f1",
                name: "Movies/big.mkv",
                attempt: 2,
                delayMs: 10,
                reason: "x"
              })
              yield* TestClock.adjust("1 second")
              assert.strictEqual((yield* published)?.files[0]?.attempts, 2, "its failed attempts so far")
              // The overall rate is the tracker's, over its own window.
              assert.isAbove(second?.bytesPerSecond ?? 0, 0)

              big.rateLimitedUntil = Date.parse("2024-01-01T00:02:00.000Z")
              yield* TestClock.adjust("1 second")
              assert.strictEqual(
                (yield* published)?.files[0]?.rateLimitedUntil,
                "2024-01-01T00:02:00.000Z",
                "a file waiting for the service's rate limit says until when"
              )
              big.rateLimitedUntil = null

              tracker.end(big, "completed")
              yield* TestClock.adjust("1 second")
              assert.isUndefined(yield* published, "cleared once nothing transfers")

              const e01 = tracker.start("f2", "TV/e01.mkv", 300, 0, 0)
              yield* TestClock.adjust("1 second")
              const third = yield* published
              assert.strictEqual(third?.completed, 1)
              assert.deepStrictEqual(
                third?.files.map((f) => f.path),
                ["TV/e01.mkv"]
              )

              // Nothing transfers, but a file waits for disk space: that is published.
              tracker.end(e01, "paused")
              queueStats.waitingForSpace = 1
              yield* TestClock.adjust("1 second")
              const waiting = yield* published
              assert.strictEqual(waiting?.waitingForSpace, 1)
              queueStats.waitingForSpace = 0
            })
          )
          assert.isUndefined(yield* published, "cleared when the run ends")
        })
      )
  )
})
