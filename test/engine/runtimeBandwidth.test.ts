/**
 * A bandwidth limit set at run time: it paces the transfers until its time, then the
 * configured limit applies again; 0 lifts a configured limit; cleared, the configured one is back.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { RuntimeBandwidth, runtimeBandwidthLayer } from "../../src/engine/runtimeBandwidth.ts"
import { Bandwidth } from "../../src/transfer/Bandwidth.ts"

/** What a transfer waits for after taking `bytes` at once. */
const waitAfter = (bytes: number) => Bandwidth.use((limiter) => Effect.succeed(limiter.take(bytes)))

describe("runtimeBandwidthLayer", () => {
  it.effect("a limit set now paces transfers until its time, then the configured one (none) applies", () =>
    Effect.gen(function* () {
      const runtime = yield* RuntimeBandwidth
      const limiter = yield* Bandwidth
      assert.strictEqual(yield* waitAfter(10_000_000), 0)
      assert.strictEqual(limiter.currentLimit(), 0)

      yield* runtime.set({ bytesPerSecond: 100_000, until: 60_000 })
      assert.deepStrictEqual(yield* runtime.current, { bytesPerSecond: 100_000, until: 60_000 })
      assert.strictEqual(limiter.currentLimit(), 100_000)
      // A second's worth beyond its burst: about a second's wait.
      const wait = yield* waitAfter(100_000 + 16 * 1024)
      assert.isAbove(wait, 900)

      yield* TestClock.adjust("61 seconds")
      assert.isNull(yield* runtime.current)
      assert.strictEqual(limiter.currentLimit(), 0)
      assert.strictEqual(yield* waitAfter(10_000_000), 0)
    }).pipe(Effect.provide(runtimeBandwidthLayer({ bandwidth_limit: 0, bandwidth_schedule: [] })))
  )

  it.effect("0 set now lifts the configured limit until cleared", () =>
    Effect.gen(function* () {
      const runtime = yield* RuntimeBandwidth
      const limiter = yield* Bandwidth
      assert.strictEqual(yield* runtime.configured, 50_000)
      assert.isAbove(yield* waitAfter(200_000), 0)

      yield* runtime.set({ bytesPerSecond: 0, until: null })
      assert.strictEqual(limiter.currentLimit(), 0)
      assert.strictEqual(yield* waitAfter(10_000_000), 0)
      yield* TestClock.adjust("1 day")
      assert.deepStrictEqual(yield* runtime.current, { bytesPerSecond: 0, until: null })

      yield* runtime.set(null)
      assert.strictEqual(limiter.currentLimit(), 50_000)
    }).pipe(Effect.provide(runtimeBandwidthLayer({ bandwidth_limit: 50_000, bandwidth_schedule: [] })))
  )
})
