import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { ApiEndpoints, makeEndpoints } from "../../src/api/ApiEndpoints.ts"
import {
  ApiError,
  CursorExpired,
  isTransient,
  mustRestartFeed,
  OAuth,
  Protocol,
  RateLimited,
  retryAfter,
  Server,
  Transport
} from "../../src/api/ApiError.ts"

describe("ApiError", () => {
  it("says what failed: operation, reason, status, code and request id", () => {
    const e = new ApiError({
      operation: "GET /files/changes",
      reason: new CursorExpired({ status: 410, code: "cursor_expired", message: "too old", requestId: "r-1" })
    })
    assert.strictEqual(
      e.message,
      "GET /files/changes: CursorExpired: too old (status 410, code cursor_expired, request id r-1)"
    )
    assert.isTrue(mustRestartFeed(e))
    const p = new ApiError({ operation: "GET /x", reason: new Protocol({ message: "m", field: "data.id" }) })
    assert.include(p.message, "field data.id")
    const o = new ApiError({
      operation: "POST /oauth/token",
      reason: new OAuth({ status: 400, error: "slow_down", message: "m" })
    })
    assert.include(o.message, "error slow_down")
  })

  it("exposes Retry-After only for rate limiting, and classes transient failures", () => {
    const limited = new ApiError({
      operation: "GET /a",
      reason: new RateLimited({ status: 429, message: "m", retryAfterMillis: 1500 })
    })
    assert.deepStrictEqual(retryAfter(limited), Option.some(Duration.millis(1500)))
    const server = new ApiError({ operation: "GET /a", reason: new Server({ status: 500, message: "m" }) })
    assert.isTrue(Option.isNone(retryAfter(server)))
    assert.isTrue(isTransient(limited) && isTransient(server))
    const transport = new ApiError({
      operation: "GET /a",
      reason: new Transport({ message: "m", neverSent: true, timedOut: false })
    })
    assert.isTrue(isTransient(transport))
  })

  it.effect("can be caught by reason", () =>
    Effect.gen(function* () {
      const failing = Effect.fail(
        new ApiError({
          operation: "GET /a",
          reason: new RateLimited({ status: 429, message: "m", retryAfterMillis: 10 })
        })
      )
      const handled = yield* failing.pipe(
        Effect.catchReason("ApiError", "RateLimited", (r) => Effect.succeed(r.retryAfterMillis))
      )
      assert.strictEqual(handled, 10)
    })
  )
})

describe("ApiEndpoints", () => {
  it.effect("normalizes trailing slashes and checks both roots", () =>
    Effect.gen(function* () {
      const ok = yield* makeEndpoints({ baseUrl: "https://svc.example/api/v1/", authUrl: "https://svc.example/" })
      assert.deepStrictEqual(
        ok,
        ApiEndpoints.of({ baseUrl: "https://svc.example/api/v1", authUrl: "https://svc.example" })
      )
      const cases = [
        { baseUrl: "https://svc.example/api/v2", authUrl: "https://svc.example" },
        { baseUrl: "ftp://svc.example/api/v1", authUrl: "https://svc.example" },
        { baseUrl: "svc.example/api/v1", authUrl: "https://svc.example" },
        { baseUrl: "https://svc.example/api/v1?x=1", authUrl: "https://svc.example" },
        { baseUrl: "https://svc.example/api/v1", authUrl: "https://user:pw@svc.example" }
      ]
      for (const urls of cases) {
        const error = yield* Effect.flip(makeEndpoints(urls))
        assert.strictEqual(error.reason._tag, "ClientValidation", JSON.stringify(urls))
        assert.match(error.message, /service\.(base|auth)_url/)
      }
    })
  )
})
