/**
 * The one retry combinator: a policy decides each wait or gives up; the waits are Effect's
 * Clock (TestClock here), the draws Effect's Random; the last failure comes out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { backoff, retrying } from "../../src/pacing/retry.ts"

describe("retrying", () => {
  it.effect("tries again after each wait the policy names, and gives up with the last failure", () =>
    Effect.gen(function* () {
      const tries = yield* Ref.make(0)
      const waits: Array<[number, number]> = []
      const attempt = Effect.flatMap(
        Ref.updateAndGet(tries, (n) => n + 1),
        (n) => Effect.fail(`failure ${n}`)
      )
      const fiber = yield* Effect.forkChild(
        retrying(
          attempt,
          (_, n) => (n < 3 ? n * 1_000 : undefined),
          (_, n, wait) => Effect.sync(() => void waits.push([n, wait]))
        ).pipe(Effect.flip)
      )
      yield* TestClock.adjust(999)
      assert.strictEqual(yield* Ref.get(tries), 1, "not before the first wait is over")
      yield* TestClock.adjust(1 + 2_000)
      assert.strictEqual(yield* Fiber.join(fiber), "failure 3")
      assert.deepStrictEqual(waits, [
        [1, 1_000],
        [2, 2_000]
      ])
    })
  )

  it.effect("backoff: full jitter below its ceiling, only the failures it retries, at most its attempts", () =>
    Effect.gen(function* () {
      const policy = backoff<string>({ attempts: 4, baseMs: 100, maxMs: 250, retryOn: (f) => f !== "fatal" })
      assert.strictEqual(policy("transient", 1, 0.5), 50)
      assert.strictEqual(policy("transient", 2, 0.999), 199)
      assert.strictEqual(policy("transient", 3, 0.999), 249, "capped at maxMs")
      assert.isUndefined(policy("transient", 4, 0.5), "four attempts in all")
      assert.isUndefined(policy("fatal", 1, 0.5))
      const tries = yield* Ref.make(0)
      const result = yield* retrying(
        Effect.flatMap(
          Ref.updateAndGet(tries, (n) => n + 1),
          (n) => (n < 3 ? Effect.fail("transient") : Effect.succeed(n))
        ),
        // The policy with a draw of 0: no wait.
        (failure: string, n) => policy(failure, n, 0)
      )
      assert.strictEqual(result, 3, "succeeds at the third attempt")
    })
  )
})
