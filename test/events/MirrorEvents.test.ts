/**
 * The event source never holds the mirror up: a subscriber that does not keep up loses
 * events (counted in the log) instead of blocking a publisher.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, PubSub } from "effect"
import { EVENT_CAPACITY, MirrorEvents, publishEvent } from "../../src/events/MirrorEvents.ts"

describe("MirrorEvents", () => {
  it.effect("publishing past a stalled subscriber's room drops and logs, and never waits", () =>
    Effect.gen(function* () {
      const logs: Array<string> = []
      const kept = yield* Effect.gen(function* () {
        const subscription = yield* (yield* MirrorEvents).subscribe
        for (let i = 0; i < EVENT_CAPACITY + 10; i++) {
          yield* publishEvent({ _tag: "local_removed", path: `f${i}`, how: "trash" })
        }
        return yield* PubSub.takeUpTo(subscription, EVENT_CAPACITY * 2)
      }).pipe(
        Effect.provide(MirrorEvents.layer),
        Effect.provide(Logger.layer([Logger.make((o) => logs.push(Logger.formatLogFmt.log(o)))]))
      )
      assert.strictEqual(kept.length, EVENT_CAPACITY)
      assert.deepStrictEqual(kept[0], { _tag: "local_removed", path: "f0", how: "trash" })
      assert.isTrue(
        logs.some((l) => l.includes("events: 1 dropped")),
        logs.join("\n")
      )
    })
  )
})
