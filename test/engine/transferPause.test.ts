/**
 * Pausing every transfer: a download under way is interrupted (as at shutdown) and waits,
 * none starts while paused, and on resume each runs again and its pass gets its one outcome.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Queue } from "effect"
import { pausableTransferQueue, TransferPause } from "../../src/engine/transferPause.ts"
import type { TransferRequest } from "../../src/transfer/TransferEngine.ts"
import { type QueuedResult, TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { fid } from "../sync/fixtures.ts"

/** A queue whose downloads run until the test finishes them, telling when each starts and is interrupted. */
const standInQueue = Effect.gen(function* () {
  const seen = yield* Queue.unbounded<string>()
  const finish = new Map<string, Deferred.Deferred<void>>()
  const finisher = (id: string) => {
    const existing = finish.get(id)
    if (existing !== undefined) return existing
    const made = Deferred.makeUnsafe<void>()
    finish.set(id, made)
    return made
  }
  let running = 0
  const queue = TransferQueue.of({
    submit: (request): Effect.Effect<QueuedResult> =>
      Effect.gen(function* () {
        running++
        yield* Queue.offer(seen, `start ${request.fileId}`)
        yield* Deferred.await(finisher(request.fileId))
        return {
          _tag: "Completed",
          fileId: request.fileId,
          path: request.path,
          written: { type: "file", size: 1, mtimeNs: 0n, ino: 1n },
          fetched: 1,
          attempts: 1
        } satisfies QueuedResult
      }).pipe(
        Effect.onInterrupt(() => Queue.offer(seen, `interrupted ${request.fileId}`)),
        Effect.ensuring(Effect.sync(() => running--))
      ),
    stats: () => ({ running, queued: 0, waitingForSpace: 0 })
  })
  return { queue, seen, finish: (id: string) => Deferred.succeed(finisher(id), undefined), running: () => running }
})

const request = (id: string): TransferRequest => ({
  fileId: fid(id),
  size: 1,
  remoteMtime: new Date(0),
  root: "/nowhere",
  path: `${id}.mkv`,
  replace: null
})

describe("pausableTransferQueue", () => {
  it.effect("pause interrupts the download under way and starts none; resume runs each again to its outcome", () =>
    Effect.gen(function* () {
      const stand = yield* standInQueue
      yield* Effect.gen(function* () {
        const queue = yield* TransferQueue
        const pause = yield* TransferPause
        const a = yield* Effect.forkChild(queue.submit(request("a")))
        assert.strictEqual(yield* Queue.take(stand.seen), "start a")

        yield* pause.pause
        assert.isTrue(yield* pause.paused)
        assert.strictEqual(yield* Queue.take(stand.seen), "interrupted a")
        const b = yield* Effect.forkChild(queue.submit(request("b")))
        yield* Effect.yieldNow
        // Neither runs; both wait, counted as queued.
        assert.strictEqual(stand.running(), 0)
        assert.deepStrictEqual(queue.stats(), { running: 0, queued: 2, waitingForSpace: 0 })

        yield* pause.resume
        assert.isFalse(yield* pause.paused)
        const started = [yield* Queue.take(stand.seen), yield* Queue.take(stand.seen)].sort()
        assert.deepStrictEqual(started, ["start a", "start b"])
        yield* stand.finish("a")
        yield* stand.finish("b")
        assert.strictEqual((yield* Fiber.join(a))._tag, "Completed")
        assert.strictEqual((yield* Fiber.join(b))._tag, "Completed")
        assert.deepStrictEqual(queue.stats(), { running: 0, queued: 0, waitingForSpace: 0 })
      }).pipe(Effect.provide(pausableTransferQueue.pipe(Layer.provide(Layer.succeed(TransferQueue, stand.queue)))))
    })
  )

  it.effect("without a pause, downloads pass straight through", () =>
    Effect.gen(function* () {
      const stand = yield* standInQueue
      yield* Effect.gen(function* () {
        const queue = yield* TransferQueue
        const a = yield* Effect.forkChild(queue.submit(request("a")))
        assert.strictEqual(yield* Queue.take(stand.seen), "start a")
        yield* stand.finish("a")
        assert.strictEqual((yield* Fiber.join(a))._tag, "Completed")
        assert.strictEqual(yield* Queue.size(stand.seen), 0)
      }).pipe(Effect.provide(pausableTransferQueue.pipe(Layer.provide(Layer.succeed(TransferQueue, stand.queue)))))
    })
  )
})
