import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { RateLimited, Server, Transport, Validation } from "../../src/api/ApiError.ts"
import {
  DEFAULT_RETRY_SCHEDULE,
  parseRetryAfter,
  RETRY_AFTER_CAP_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  retryDelay
} from "../../src/api/retryPolicy.ts"
import { backoffDelay as backoffWithin } from "../../src/pacing/backoff.ts"

/** The shared backoff over the API client's schedule. */
const backoffDelay = (retry: number, random: number) =>
  backoffWithin(retry, random, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS)

const NOW = Date.UTC(2026, 10, 22, 6, 0, 0)

describe("parseRetryAfter", () => {
  it("reads delta-seconds", () => {
    assert.strictEqual(parseRetryAfter("0", NOW), 0)
    assert.strictEqual(parseRetryAfter("7", NOW), 7_000)
    assert.strictEqual(parseRetryAfter(" 120 ", NOW), 120_000)
  })

  it("reads the three HTTP date forms relative to now, a past date as 0", () => {
    assert.strictEqual(parseRetryAfter("Sun, 22 Nov 2026 06:00:30 GMT", NOW), 30_000)
    assert.strictEqual(parseRetryAfter("Sunday, 22-Nov-26 06:01:00 GMT", NOW), 60_000)
    assert.strictEqual(parseRetryAfter("Sun Nov 22 06:00:05 2026", NOW), 5_000)
    assert.strictEqual(parseRetryAfter("Sat, 21 Nov 2026 06:00:00 GMT", NOW), 0)
  })

  it("ignores garbage, negative and fractional values", () => {
    for (const v of [
      undefined,
      "",
      "soon",
      "-5",
      "1.5",
      "5s",
      "0x10",
      "Sun, 99 Foo 2026 06:00:00 GMT",
      "2026-11-22T06:01:00Z"
    ]) {
      assert.isUndefined(parseRetryAfter(v, NOW), String(v))
    }
  })

  it("caps huge values, seconds and dates alike", () => {
    assert.strictEqual(parseRetryAfter("99999999999999999999999", NOW), RETRY_AFTER_CAP_MS)
    assert.strictEqual(parseRetryAfter("Fri, 01 Jan 2100 00:00:00 GMT", NOW), RETRY_AFTER_CAP_MS)
  })
})

describe("backoffDelay", () => {
  it("draws from [0, base·2^(n-1)) with full jitter, up to the maximum", () => {
    assert.strictEqual(backoffDelay(1, 0), 0)
    assert.strictEqual(backoffDelay(1, 0.5), RETRY_BASE_DELAY_MS / 2)
    assert.strictEqual(backoffDelay(3, 0.5), (RETRY_BASE_DELAY_MS * 4) / 2)
    assert.isBelow(backoffDelay(1, 0.999999), RETRY_BASE_DELAY_MS)
    assert.strictEqual(backoffDelay(50, 0.5), RETRY_MAX_DELAY_MS / 2)
    assert.isBelow(backoffDelay(1000, 0.999999), RETRY_MAX_DELAY_MS)
  })
})

describe("retryDelay", () => {
  const server = new Server({ status: 503, message: "down" })
  const refused = new Transport({ message: "ECONNREFUSED", neverSent: true, timedOut: false })
  const reset = new Transport({ message: "ECONNRESET", neverSent: false, timedOut: false })
  const limited = (retryAfterMillis?: number) =>
    new RateLimited(
      retryAfterMillis === undefined
        ? { status: 429, message: "slow" }
        : { status: 429, message: "slow", retryAfterMillis }
    )

  it("retries idempotent requests on 5xx, 429 and any transport failure", () => {
    for (const failure of [server, refused, reset, limited()]) {
      assert.isDefined(retryDelay({ failure, idempotency: "idempotent", attempts: 1, random: 0.5 }), failure._tag)
    }
  })

  it("retries unsafe requests only when they provably never reached the server", () => {
    assert.isDefined(retryDelay({ failure: refused, idempotency: "unsafe", attempts: 1, random: 0.5 }))
    for (const failure of [
      server,
      reset,
      limited(1000),
      new Transport({ message: "t", neverSent: false, timedOut: true })
    ]) {
      assert.isUndefined(retryDelay({ failure, idempotency: "unsafe", attempts: 1, random: 0.5 }), failure._tag)
    }
  })

  it("never retries a refused server certificate, even for an idempotent request", () => {
    const failure = new Transport({
      message: "connection failed (CERT_HAS_EXPIRED)",
      neverSent: false,
      timedOut: false,
      certificate: "CERT_HAS_EXPIRED"
    })
    assert.isUndefined(retryDelay({ failure, idempotency: "idempotent", attempts: 1, random: 0.5 }))
  })

  it("never retries a client-side problem", () => {
    const failure = new Validation({ status: 422, message: "bad", fields: {} })
    assert.isUndefined(retryDelay({ failure, idempotency: "idempotent", attempts: 1, random: 0.5 }))
  })

  it("honours Retry-After (at least that long), and hands a long one to the caller", () => {
    assert.strictEqual(
      retryDelay({ failure: limited(5_000), idempotency: "idempotent", attempts: 1, random: 0.5 }),
      5_000
    )
    assert.strictEqual(retryDelay({ failure: limited(0), idempotency: "idempotent", attempts: 1, random: 0.5 }), 250)
    const tooLong = DEFAULT_RETRY_SCHEDULE.maxInlineWaitMs + 1
    assert.isUndefined(retryDelay({ failure: limited(tooLong), idempotency: "idempotent", attempts: 1, random: 0.5 }))
  })

  it("stops after the schedule's attempts", () => {
    const max = DEFAULT_RETRY_SCHEDULE.maxAttempts
    assert.isDefined(retryDelay({ failure: server, idempotency: "idempotent", attempts: max - 1, random: 0.1 }))
    assert.isUndefined(retryDelay({ failure: server, idempotency: "idempotent", attempts: max, random: 0.1 }))
  })
})

describe("retry policy properties", () => {
  it("backoff stays within [0, min(max, base·2^(n-1)))", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = backoffDelay(n, r)
          const ceiling = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (n - 1))
          return Number.isInteger(d) && d >= 0 && d < ceiling
        }
      )
    )
  })

  it("any Retry-After is either ignored or a delay in [0, cap]", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.nat().map(String),
          fc.date().map((d) => d.toUTCString())
        ),
        (text) => {
          const d = parseRetryAfter(text, NOW)
          return d === undefined || (d >= 0 && d <= RETRY_AFTER_CAP_MS)
        }
      )
    )
  })

  it("an unsafe request that reached the server is never resent, whatever the failure", () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), fc.integer({ min: 1, max: 10 }), (status, attempts) => {
        const failure =
          status === 429
            ? new RateLimited({ status, message: "m", retryAfterMillis: 0 })
            : new Server({ status, message: "m" })
        return retryDelay({ failure, idempotency: "unsafe", attempts, random: 0.5 }) === undefined
      })
    )
  })
})
