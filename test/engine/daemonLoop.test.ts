/**
 * The daemon's schedule (daemonLoop.ts) with scripted polls and reconciles on the TestClock:
 * polls keep their schedule while a reconcile runs, a reconcile owed meanwhile starts as
 * soon as the running one ends, polls never overlap, a failed poll holds the next reconcile
 * back, and the loop ends the reconcile with it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Fiber, Queue } from "effect"
import { TestClock } from "effect/testing"
import { type DaemonSteps, type PollOutcome, runDaemonLoop, type Wake } from "../../src/engine/daemonLoop.ts"

const POLL_INTERVAL = Duration.seconds(60)

/** A loop over scripted steps; `events` records what ran and when (seconds on the TestClock). */
const startLoop = Effect.fnUntraced(function* (firstOutcomes: ReadonlyArray<PollOutcome> = []) {
  const wakes = yield* Queue.unbounded<Wake>()
  const events: Array<string> = []
  /** Outcomes of the next polls, in order; "idle" once used up. */
  const outcomes: Array<PollOutcome> = [...firstOutcomes]
  /** How long the next polls take, in seconds; 0 once used up. */
  const pollSeconds: Array<number> = []
  const reconciles: Array<Deferred.Deferred<void, string>> = []
  let polling = 0
  let pollsOverlapped = false
  const seconds = Effect.map(Clock.currentTimeMillis, (ms) => ms / 1000)

  const steps: DaemonSteps<string> = {
    wakes,
    nextPollIn: Effect.succeed(Duration.toMillis(POLL_INTERVAL)),
    poll: Effect.fnUntraced(function* (wake: Wake) {
      if (polling > 0) pollsOverlapped = true
      polling++
      events.push(`poll ${wake} @${yield* seconds}`)
      const takes = pollSeconds.shift() ?? 0
      if (takes > 0) {
        yield* Effect.sleep(Duration.seconds(takes))
        events.push(`polled @${yield* seconds}`)
      }
      polling--
      return outcomes.shift() ?? "idle"
    }),
    reconcile: Effect.gen(function* () {
      const done = yield* Deferred.make<void, string>()
      reconciles.push(done)
      events.push(`reconcile @${yield* seconds}`)
      yield* Deferred.await(done).pipe(
        Effect.onInterrupt(() => Effect.sync(() => events.push("reconcile interrupted")))
      )
    })
  }
  const loop = yield* Effect.forkScoped(runDaemonLoop(steps))
  yield* settle
  return {
    wakes,
    events,
    outcomes,
    pollSeconds,
    loop,
    overlapped: () => pollsOverlapped,
    /** Ends the reconcile under way, with a failure when given one. */
    endReconcile: Effect.fnUntraced(function* (failure?: string) {
      const current = reconciles.at(-1)
      assert.isDefined(current, "a reconcile runs")
      if (current === undefined) return
      yield* failure === undefined ? Deferred.succeed(current, undefined) : Deferred.fail(current, failure)
      yield* settle
    })
  }
})

/** Lets every fiber run what it can at the current time. */
const settle = TestClock.adjust(0)

const advance = (seconds: number) => TestClock.adjust(Duration.seconds(seconds))

describe("daemonLoop", () => {
  it.effect("polls on schedule while a reconcile runs; a reconcile owed meanwhile starts when it ends", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop()
      assert.deepStrictEqual(daemon.events, ["poll start @0", "reconcile @0"], "the full pass at start")

      yield* advance(60)
      daemon.outcomes.push("reconcile")
      yield* advance(60)
      yield* advance(30)
      assert.deepStrictEqual(
        daemon.events.slice(2),
        ["poll timer @60", "poll timer @120"],
        "polled during the reconcile"
      )

      yield* daemon.endReconcile()
      assert.deepStrictEqual(daemon.events.slice(4), ["reconcile @150"], "the next reconcile at once")

      yield* advance(30)
      assert.deepStrictEqual(
        daemon.events.slice(5),
        ["poll timer @180"],
        "the poll schedule runs on from the last poll, across reconciles"
      )
    })
  )

  it.effect("a reconcile that nothing owed when it ends is not followed by another; polls go on", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop()
      yield* advance(90)
      yield* daemon.endReconcile()
      yield* advance(30)
      yield* advance(60)
      assert.deepStrictEqual(daemon.events, [
        "poll start @0",
        "reconcile @0",
        "poll timer @60",
        "poll timer @120",
        "poll timer @180"
      ])
    })
  )

  it.effect("a poll signal polls at once, during a reconcile too, and the next poll is due an interval later", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop()
      yield* advance(10)
      daemon.outcomes.push("reconcile")
      yield* Queue.offer(daemon.wakes, "signal")
      yield* settle
      yield* advance(59)
      assert.deepStrictEqual(daemon.events.slice(2), ["poll signal @10"])
      yield* advance(1)
      assert.deepStrictEqual(daemon.events.slice(3), ["poll timer @70"])
      yield* daemon.endReconcile()
      assert.deepStrictEqual(daemon.events.slice(4), ["reconcile @70"], "the signal owed a reconcile")
    })
  )

  it.effect("polls never overlap; a poll under way when the reconcile ends is let finish", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop()
      daemon.pollSeconds.push(20)
      daemon.outcomes.push("reconcile")
      yield* advance(60)
      yield* Queue.offer(daemon.wakes, "signal")
      yield* advance(5)
      yield* daemon.endReconcile()
      yield* advance(15)
      assert.deepStrictEqual(daemon.events.slice(2, 4), ["poll timer @60", "polled @80"])
      // Then, at once and in either order: the reconcile it owed, and the signal's poll.
      assert.sameMembers(daemon.events.slice(4), ["reconcile @80", "poll signal @80"])
      assert.isFalse(daemon.overlapped(), "one catch-up at a time")
    })
  )

  it.effect("after a failed poll, the reconcile owed waits for a poll that succeeds", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop()
      assert.deepStrictEqual(daemon.events, ["poll start @0", "reconcile @0"])
      daemon.outcomes.push("reconcile", "failed", "idle")
      yield* advance(60)
      yield* advance(60)
      yield* daemon.endReconcile()
      assert.deepStrictEqual(
        daemon.events.slice(2),
        ["poll timer @60", "poll timer @120"],
        "no reconcile after a failed poll"
      )
      yield* advance(60)
      assert.deepStrictEqual(daemon.events.slice(4), ["poll timer @180", "reconcile @180"])
    })
  )

  it.effect("the full pass at start waits for a catch-up that succeeds", () =>
    Effect.gen(function* () {
      const daemon = yield* startLoop(["failed", "failed"])
      yield* advance(60)
      assert.deepStrictEqual(daemon.events, ["poll start @0", "poll timer @60"])
      yield* advance(60)
      assert.deepStrictEqual(daemon.events, ["poll start @0", "poll timer @60", "poll timer @120", "reconcile @120"])
    })
  )

  it.effect("a failing reconcile fails the loop; interrupting the loop interrupts the reconcile", () =>
    Effect.gen(function* () {
      const failing = yield* startLoop()
      yield* failing.endReconcile("disk gone")
      assert.deepStrictEqual(yield* Fiber.await(failing.loop), Exit.fail("disk gone"))

      const stopped = yield* startLoop()
      yield* advance(30)
      yield* Fiber.interrupt(stopped.loop)
      assert.deepStrictEqual(stopped.events, ["poll start @0", "reconcile @0", "reconcile interrupted"])
    })
  )
})
