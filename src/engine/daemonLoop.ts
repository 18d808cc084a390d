/**
 * The daemon's schedule: when it catches the store up with the account (a poll) and when it
 * brings the root in line (a reconcile). Polls go on while a reconcile runs, so a pass that
 * downloads for hours neither delays new remote items by hours nor lets the feed cursor expire.
 *
 *   start ─► poll ─► owed, and the last poll succeeded? ──no──► wait ─► poll ─┐
 *                         ▲   ▲  │ yes                                          │
 *                         │   └──┼──────────────────────────────────────────────┘
 *                         │      ▼
 *                         │    reconcile, on a fiber of its own; meanwhile on this one:
 *                         │      wait ─► poll ─► wait ─► poll …
 *                         └─── the reconcile ends (a poll under way finishes first)
 *
 *   wait: until the next poll is due (the poll interval, jittered) or a wake comes (a poll
 *   signal, a change under the root, a webhook); a poll that asks for a reconcile owes one.
 *
 * Invariants:
 * - Polls run on this fiber only, one after the other: never two catch-ups at once. A poll
 *   under way when the reconcile ends is let finish (an idle poll stays one request).
 * - One reconcile at a time. A reconcile owed by a poll during the last one starts as soon as
 *   that one ends, not a poll interval later; the daemon starts owing one (the full pass).
 * - A reconcile starts only after a poll that succeeded: after a failed catch-up (service
 *   unreachable, login required) the owed reconcile waits for the next poll that succeeds.
 * - The next poll is due one jittered interval after the last one, whether a reconcile ran
 *   in between or not.
 * - A poll or a reconcile that fails fails the loop; the other is interrupted first.
 */
import { Clock, Effect, Fiber, Option, Queue } from "effect"

/**
 * What woke the daemon: the start, the poll timer, a poll signal, a change under the root,
 * a verified webhook delivery (PollRequests), the intake (a download's files exist on the
 * service, or went with its removal).
 */
export type Wake = "start" | "timer" | "signal" | "local" | "webhook" | "intake"

/**
 * What a poll found. `reconcile`: the catch-up succeeded and the root needs a reconcile (the
 * store or the root changed, failures are due for a retry, a signal asked); `idle`: it
 * succeeded and nothing needs doing; `failed`: it failed in a way the daemon waits out.
 */
export type PollOutcome = "reconcile" | "idle" | "failed"

export interface DaemonSteps<E> {
  /** Wakes other than the timer: poll signals and changes under the root. */
  readonly wakes: Queue.Dequeue<Wake>
  /** Milliseconds from a poll to the next one (the poll interval, jittered). */
  readonly nextPollIn: Effect.Effect<number>
  /** One catch-up. Failures the daemon waits out are `failed`; others fail the loop. */
  readonly poll: (wake: Wake) => Effect.Effect<PollOutcome, E>
  /** One reconcile: plan, local actions, downloads. */
  readonly reconcile: Effect.Effect<void, E>
}

/** Runs the schedule until interrupted or a step fails. */
export const runDaemonLoop = Effect.fnUntraced(function* <E>(steps: DaemonSteps<E>): Effect.fn.Return<never, E> {
  let owed = true
  let lastPollSucceeded = false
  let due = 0

  const pollOn = Effect.fnUntraced(function* (wake: Wake): Effect.fn.Return<void, E> {
    const outcome = yield* steps.poll(wake)
    if (outcome === "reconcile") owed = true
    lastPollSucceeded = outcome !== "failed"
    due = (yield* Clock.currentTimeMillis) + (yield* steps.nextPollIn)
  })

  const nextWake = Effect.gen(function* () {
    const left = Math.max(0, due - (yield* Clock.currentTimeMillis))
    const woken = yield* Effect.timeoutOption(Queue.take(steps.wakes), left)
    return Option.getOrElse(woken, (): Wake => "timer")
  })

  /** One reconcile, polling on schedule until it ends; its failure is the loop's. */
  const reconcileWhilePolling = Effect.scoped(
    Effect.gen(function* () {
      const reconciling = yield* Effect.forkScoped(steps.reconcile)
      const ended = Effect.as(Fiber.await(reconciling), undefined)
      while (true) {
        const wake = yield* Effect.raceFirst(ended, nextWake)
        if (wake === undefined) break
        yield* pollOn(wake)
      }
      yield* Fiber.join(reconciling)
    })
  )

  yield* pollOn("start")
  while (true) {
    if (owed && lastPollSucceeded) {
      owed = false
      yield* reconcileWhilePolling
    } else yield* pollOn(yield* nextWake)
  }
})
