/**
 * The one local server (src/server/LocalServer.ts): a request that arrives while its routes
 * are still being built is answered 503 at once, never left without an answer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { serveLocally } from "../../src/server/LocalServer.ts"
import { freePort } from "../integration/harness.ts"

describe("serveLocally", () => {
  it.live("answers 503 while its routes are built, then serves them", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(freePort)
      const routesMayFinish = yield* Deferred.make<void>()
      // A route's layer that waits (as one that asks the service first does).
      const routes = Layer.effectDiscard(
        Effect.gen(function* () {
          const router = yield* HttpRouter.HttpRouter
          yield* Deferred.await(routesMayFinish)
          yield* router.add("GET", "/ok", Effect.succeed(HttpServerResponse.text("ok\n")))
        })
      )
      const serving = yield* Effect.forkChild(
        Effect.andThen(
          serveLocally(
            {
              listen: { host: "127.0.0.1", port },
              setting: "test.listen",
              name: "test server",
              requestTimeoutMs: 5_000
            },
            routes
          ),
          Effect.never
        ).pipe(Effect.scoped)
      )
      const get = Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/ok`, { signal: AbortSignal.timeout(5_000) }).then(
          async (r) => ({ status: r.status, body: await r.text() }),
          (e: unknown) => ({ status: 0, body: String(e) })
        )
      )
      /** Asks again (every 10 ms, 2 s at most) while the answer is `passing`; the last answer. */
      const getWhile = (passing: (status: number) => boolean) =>
        Effect.gen(function* () {
          let answer = yield* get
          for (let i = 0; i < 200 && passing(answer.status); i++) {
            yield* Effect.sleep("10 millis")
            answer = yield* get
          }
          return answer
        })
      // Bound, routes not built: once the port takes connections, the answer comes at once.
      const early = yield* getWhile((status) => status === 0)
      assert.strictEqual(early.status, 503, early.body)
      yield* Deferred.succeed(routesMayFinish, undefined)
      assert.deepStrictEqual(yield* getWhile((status) => status !== 200), { status: 200, body: "ok\n" })
      yield* Fiber.interrupt(serving)
    })
  )
})
