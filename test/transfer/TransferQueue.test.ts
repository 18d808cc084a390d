import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { TransferEvent } from "../../src/transfer/ProgressTracker.ts"
import { nodeTransferFs } from "../../src/transfer/TransferFs.ts"
import { TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { makeHarness } from "./support/harness.ts"
import { makeContent, RangeServer } from "./support/rangeServer.ts"

const KiB = 1024
const MiB = 1024 * KiB

const serverWith = (files: number, size: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = await RangeServer.start()
      for (let i = 0; i < files; i++) {
        server.files.set(`f${i}`, { content: makeContent(size, i + 1), etag: `"e${i}"`, lastModified: null })
      }
      return server
    }),
    (server) => Effect.promise(() => server.close())
  )

describe("TransferQueue", () => {
  it.effect("runs at most `concurrency` files at once and completes them all", () =>
    Effect.gen(function* () {
      const server = yield* serverWith(6, 256 * KiB)
      // Both slots must fill: no body is sent until two are open at once.
      server.faults.holdUntilPumping = 2
      const h = makeHarness({ link: (id) => server.link(id), options: { concurrency: 2, segment_threshold: 1e9 } })
      const results = yield* Effect.gen(function* () {
        const queue = yield* TransferQueue
        return yield* Effect.forEach([0, 1, 2, 3, 4, 5], (i) => queue.submit(h.request(`f${i}`, 256 * KiB)), {
          concurrency: "unbounded"
        })
      }).pipe(Effect.provide(h.queueLayer))
      assert.deepStrictEqual(
        results.map((r) => r._tag),
        ["Completed", "Completed", "Completed", "Completed", "Completed", "Completed"]
      )
      assert.strictEqual(server.maxPumping, 2)
      for (let i = 0; i < 6; i++) {
        const got = Fs.readFileSync(Path.join(h.root, `media/f${i}.bin`))
        assert.isTrue(got.equals(server.files.get(`f${i}`)?.content ?? Buffer.alloc(0)))
      }
    }).pipe(Effect.scoped)
  )

  // Real time: real sockets under the real-time token bucket. Only the ceiling is asserted: a
  // busy machine can only make the transfer slower, never faster (the bucket's arithmetic,
  // including that it hands out the full rate, is test/transfer/pure.test.ts's).
  it.live("never exceeds the global bandwidth limit by more than 10 % across concurrent transfers", () =>
    Effect.gen(function* () {
      const size = 1536 * KiB
      const server = yield* serverWith(2, size)
      const limit = 3 * MiB
      const h = makeHarness({
        link: (id) => server.link(id),
        bandwidth: limit,
        options: { concurrency: 2, segments: 2, segment_threshold: 512 * KiB }
      })
      const started = performance.now()
      yield* Effect.gen(function* () {
        const queue = yield* TransferQueue
        yield* Effect.forEach(["f0", "f1"], (id) => queue.submit(h.request(id, size)), { concurrency: "unbounded" })
      }).pipe(Effect.provide(h.queueLayer))
      const seconds = (performance.now() - started) / 1000
      const rate = (2 * size) / seconds
      assert.isAtMost(rate, limit * 1.1, `measured ${(rate / MiB).toFixed(2)} MiB/s`)
    }).pipe(Effect.scoped)
  )

  it.effect("a file paused for disk space gives its slot back and resumes when space returns", () =>
    Effect.gen(function* () {
      const server = yield* serverWith(1, 128 * KiB)
      let statfsCalls = 0
      const fs = {
        ...nodeTransferFs,
        freeBytes: async () => (++statfsCalls <= 2 ? 10 * KiB : 100 * MiB)
      }
      const h = makeHarness({
        link: (id) => server.link(id),
        fs,
        options: { min_free_space: 1 * MiB, spaceRecheckMs: 10 }
      })
      const events: Array<TransferEvent["_tag"]> = []
      const paused = yield* Deferred.make<void>()
      h.progress.subscribe((e) => {
        events.push(e._tag)
        if (e._tag === "Paused") Deferred.doneUnsafe(paused, Exit.void)
      })
      const submitted = yield* Effect.forkChild(
        Effect.gen(function* () {
          const queue = yield* TransferQueue
          return yield* queue.submit(h.request("f0", 128 * KiB))
        }).pipe(Effect.provide(h.queueLayer))
      )
      // Paused: the queue now waits one recheck interval before asking for free space again.
      yield* Deferred.await(paused)
      assert.strictEqual(statfsCalls, 2)
      yield* TestClock.adjust(10)
      const result = yield* Fiber.join(submitted)
      assert.strictEqual(result._tag, "Completed")
      assert.isAtLeast(statfsCalls, 3)
      assert.deepStrictEqual(events, ["Started", "Paused", "Retrying", "Started", "Finished"])
      assert.strictEqual(server.log.length, 1, "no request while there was no room")
    }).pipe(Effect.scoped)
  )

  it.live("without waitForSpace a file short of room fails with NotEnoughSpace at once, nothing requested", () =>
    Effect.gen(function* () {
      const server = yield* serverWith(1, 128 * KiB)
      const fs = { ...nodeTransferFs, freeBytes: async () => 10 * KiB }
      const h = makeHarness({
        link: (id) => server.link(id),
        fs,
        options: { min_free_space: 1 * MiB, spaceRecheckMs: 10, waitForSpace: false }
      })
      const error = yield* Effect.gen(function* () {
        const queue = yield* TransferQueue
        return yield* Effect.flip(queue.submit(h.request("f0", 128 * KiB)))
      }).pipe(Effect.provide(h.queueLayer))
      assert.strictEqual(error._tag, "NotEnoughSpace")
      assert.strictEqual(error.free, 10 * KiB)
      assert.strictEqual(error.needed, 128 * KiB + 1 * MiB)
      assert.strictEqual(server.log.length, 0)
    }).pipe(Effect.scoped)
  )
})
