/**
 * Debounced batches of mirror events, for consumers that act on many events at once (a
 * media-server refresh per folder, a notification per burst):
 *
 *   subscription ─► select ─► pending ─► quiet for `quietMs`, or `maxWaitMs` since the first
 *                                        └─► batch ─► delivery queue ─► deliver (one at a time)
 *
 * Invariants:
 * - The subscription is read all the time, also while a delivery is slow or retrying, so a
 *   slow receiver never makes the event source drop events for every consumer.
 * - `deliver` runs on one fiber, batch after batch, and cannot fail the mirror (its failures
 *   are its own to log).
 * - When the scope closes (shutdown, the end of `run --once`), the events not yet delivered
 *   are delivered at once, for at most DRAIN_TIMEOUT, then whatever is left is dropped.
 * - Time is Effect's Clock (TestClock in tests).
 */
import { Cause, Clock, Duration, Effect, Fiber, PubSub, Queue, type Scope } from "effect"
import type { MirrorEvent } from "./MirrorEvent.ts"
import { MirrorEvents } from "./MirrorEvents.ts"

/** The longest shutdown waits for batches still to deliver. */
export const DRAIN_TIMEOUT = Duration.seconds(20)

export interface BatchOptions<A, R> {
  /** What the consumer keeps of an event; undefined: not its business. */
  readonly select: (event: MirrorEvent) => A | undefined
  readonly quietMs: number
  readonly maxWaitMs: number
  readonly deliver: (batch: ReadonlyArray<A>) => Effect.Effect<void, never, R>
}

/** Starts batching for the scope's life (subscribed before it returns). */
export const batchEvents = Effect.fnUntraced(function* <A, R>(
  options: BatchOptions<A, R>
): Effect.fn.Return<void, never, Scope.Scope | R | MirrorEvents> {
  const events = yield* MirrorEvents
  const subscription = yield* events.subscribe
  const batches = yield* Queue.unbounded<ReadonlyArray<A>, Cause.Done>()
  let pending: Array<A> = []

  const takeSelected: Effect.Effect<A> = Effect.flatMap(PubSub.take(subscription), (event) => {
    const selected = options.select(event)
    return selected === undefined ? takeSelected : Effect.succeed(selected)
  })
  const close = Effect.suspend(() => {
    const batch = pending
    pending = []
    return batch.length === 0 ? Effect.void : Queue.offer(batches, batch)
  })
  const collect = Effect.forever(
    Effect.gen(function* () {
      pending.push(yield* takeSelected)
      const deadline = (yield* Clock.currentTimeMillis) + options.maxWaitMs
      while (true) {
        const left = deadline - (yield* Clock.currentTimeMillis)
        if (left <= 0) break
        const next = yield* Effect.timeoutOption(takeSelected, Math.min(options.quietMs, left))
        if (next._tag === "None") break
        pending.push(next.value)
      }
      yield* close
    })
  )
  const deliverAll = Effect.forever(Effect.flatMap(Queue.take(batches), options.deliver)).pipe(
    Effect.catchIf(Cause.isDone, () => Effect.void)
  )

  const delivering = yield* Effect.forkDetach(deliverAll)
  const collecting = yield* Effect.forkDetach(collect)
  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      yield* Fiber.interrupt(collecting)
      for (const event of yield* PubSub.takeUpTo(subscription, Number.POSITIVE_INFINITY)) {
        const selected = options.select(event)
        if (selected !== undefined) pending.push(selected)
      }
      yield* close
      yield* Queue.end(batches)
      const drained = yield* Effect.timeoutOption(Fiber.await(delivering), DRAIN_TIMEOUT)
      if (drained._tag === "None") {
        yield* Fiber.interrupt(delivering)
        yield* Effect.logWarning(
          `shutdown: refreshes or notifications not delivered within ${Duration.format(DRAIN_TIMEOUT)} were dropped`
        )
      }
    })
  )
})
