/**
 * Pause and resume every transfer at once (the web page's "pause all"), around the transfer
 * queue and none of its internals:
 *
 *   submit ─► paused? wait for resume ─► queue.submit ─► its result
 *                 ▲                            │ pause while it runs: the download is
 *                 └────────────────────────────┘ interrupted (it stops at its last durable
 *                                                 offset, partial data kept) and waits
 *
 * Invariants:
 * - While paused no download runs: those under way are interrupted, as at shutdown, so their
 *   requests end and every write has ended (TransferEngine); none starts until resumed.
 * - A paused download is not failed: its `submit` waits and resumes from its partial data,
 *   so the pass that asked for it gets its one outcome as if nothing happened.
 * - The pause lasts until resumed or until the process ends (never stored).
 */
import { Context, Effect, Latch, Layer, Option } from "effect"
import { TransferQueue } from "../transfer/TransferQueue.ts"

export interface TransferPauseShape {
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
  /** Whether transfers are paused now. */
  readonly paused: Effect.Effect<boolean>
}

export class TransferPause extends Context.Service<TransferPause, TransferPauseShape>()(
  "dlsync/engine/TransferPause"
) {}

/**
 * TransferQueue, pausable, with its TransferPause: provide it with the queue it wraps
 * (`Layer.provide(TransferQueue.layer(options))`).
 */
export const pausableTransferQueue: Layer.Layer<TransferQueue | TransferPause, never, TransferQueue> =
  Layer.effectContext(
    Effect.gen(function* () {
      const queue = yield* TransferQueue
      /** Open while transfers may run. */
      const running = yield* Latch.make(true)
      /** Open while they are paused. */
      const pausedLatch = yield* Latch.make(false)
      let paused = false
      /** Downloads submitted and held back by the pause. */
      let held = 0

      const waitForResume = Effect.suspend(() => {
        if (!paused) return Effect.void
        held++
        return Effect.ensuring(
          running.await,
          Effect.sync(() => held--)
        )
      })

      const submit: TransferQueue["Service"]["submit"] = (request) =>
        Effect.gen(function* () {
          while (true) {
            yield* waitForResume
            const outcome = yield* Effect.raceFirst(
              Effect.map(queue.submit(request), Option.some),
              Effect.as(pausedLatch.await, Option.none())
            )
            if (Option.isSome(outcome)) return outcome.value
          }
        })

      const control: TransferPauseShape = {
        pause: Effect.suspend(() => {
          paused = true
          return Effect.andThen(running.close, pausedLatch.open)
        }).pipe(Effect.asVoid),
        resume: Effect.suspend(() => {
          paused = false
          return Effect.andThen(pausedLatch.close, running.open)
        }).pipe(Effect.asVoid),
        paused: Effect.sync(() => paused)
      }
      return Context.make(
        TransferQueue,
        TransferQueue.of({
          submit,
          stats: () => {
            const stats = queue.stats()
            return { ...stats, queued: stats.queued + held }
          }
        })
      ).pipe(Context.add(TransferPause, TransferPause.of(control)))
    })
  )
