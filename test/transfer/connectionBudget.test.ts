import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { ConnectionBudget } from "../../src/transfer/connectionBudget.ts"

describe("ConnectionBudget", () => {
  it.effect("a try holds its permit only while its effect runs: never run, it holds nothing", () =>
    Effect.gen(function* () {
      const budget = new ConnectionBudget(2)
      const running = yield* Deferred.make<void>()
      const held = budget.tryConnection("cdn", Deferred.succeed(running, undefined).pipe(Effect.andThen(Effect.never)))
      assert.isDefined(held)
      // Asked for and dropped (a fiber interrupted before it began): nothing is taken.
      assert.strictEqual(budget.free("cdn"), 2)
      const fiber = yield* Effect.forkChild(held ?? Effect.void)
      yield* Deferred.await(running)
      assert.strictEqual(budget.free("cdn"), 1)
      assert.isDefined(budget.tryConnection("cdn", Effect.void))
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(budget.free("cdn"), 2)
    })
  )

  it.effect("forked with startImmediately, tries in a row never exceed the budget", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const budget = new ConnectionBudget(3)
        let launched = 0
        for (let i = 0; i < 10; i++) {
          const held = budget.tryConnection("cdn", Effect.never)
          if (held === undefined) break
          yield* Effect.forkScoped(held, { startImmediately: true })
          launched++
        }
        assert.strictEqual(launched, 3)
        assert.strictEqual(budget.free("cdn"), 0)
        assert.strictEqual(budget.free("other"), 3)
      })
    )
  )
})
