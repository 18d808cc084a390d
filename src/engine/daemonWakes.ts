/**
 * What wakes the daemon besides its poll timer, as one queue of Wake values: a poll signal
 * (SIGHUP, SIGUSR1) or the owner's request from the web page (DaemonRequests), both as
 * "signal"; a verified webhook delivery (PollRequests); a change under the root
 * (fs/watchFolder.ts, settled SETTLE_MS). A change under the root is also marked until the
 * next reconcile starts, so it is owed even when its wake was dropped from the full queue.
 *
 * Invariants:
 * - The queue is sliding: a burst of wakes never blocks a source, the newest are kept.
 * - Signal handlers and the watcher live for the scope; nothing is left installed after it.
 */
import { Effect, Queue, Ref, type Scope } from "effect"
import { PollRequests } from "../events/PollRequests.ts"
import { watchFolder } from "../fs/watchFolder.ts"
import { DLSYNC_DIR } from "../sync/tree.ts"
import { DaemonRequests } from "./DaemonRequests.ts"
import type { Wake } from "./daemonLoop.ts"

/** Signals that make the daemon poll at once. */
export const POLL_SIGNALS = ["SIGHUP", "SIGUSR1"] as const

/** A change under the root is acted on once the root has been quiet this long. */
export const SETTLE_MS = 2_000

/** Wakes waiting beyond this many push the oldest out. */
const WAKE_CAPACITY = 4

export interface DaemonWakes {
  readonly queue: Queue.Queue<Wake>
  /** Wakes the daemon for `reason` (the intake's, the owner's requests). */
  readonly wake: (reason: Wake) => Effect.Effect<void>
  /** Whether something changed under the root since `settleLocalChanges` last ran. */
  readonly localChanged: Effect.Effect<boolean>
  /** A reconcile starts: changes from now on are the next one's. */
  readonly settleLocalChanges: Effect.Effect<void>
}

export const daemonWakes = Effect.fnUntraced(function* (
  root: string
): Effect.fn.Return<DaemonWakes, never, PollRequests | DaemonRequests | Scope.Scope> {
  const queue = yield* Queue.sliding<Wake>(WAKE_CAPACITY)
  const changed = yield* Ref.make(false)

  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const onSignal = () => Queue.offerUnsafe(queue, "signal")
      for (const signal of POLL_SIGNALS) process.on(signal, onSignal)
      return onSignal
    }),
    (onSignal) =>
      Effect.sync(() => {
        for (const signal of POLL_SIGNALS) process.off(signal, onSignal)
      })
  )

  const requests = yield* PollRequests
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(requests.next, Queue.offer(queue, "webhook"))))
  const asked = yield* DaemonRequests
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(asked.next, Queue.offer(queue, "signal"))))

  const rootWatch = yield* watchFolder({
    folder: root,
    what: "the mirror root",
    whenFailing: "what changes under it is seen only by a pass run for another reason (SIGHUP runs one)",
    ignored: (path) => path.startsWith(`${root}/${DLSYNC_DIR}`),
    settleMs: SETTLE_MS
  })
  const localChange = Effect.andThen(Ref.set(changed, true), Queue.offer(queue, "local"))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Queue.take(rootWatch.changes), localChange)))

  return {
    queue,
    wake: (reason) => Effect.asVoid(Queue.offer(queue, reason)),
    localChanged: Ref.get(changed),
    settleLocalChanges: Ref.set(changed, false)
  }
})
