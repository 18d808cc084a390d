import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { backoffDelay } from "../../src/pacing/backoff.ts"
import {
  decideRetry,
  type FailedAttempt,
  NO_RETRIES,
  type RetryCounts,
  type RetryLimits,
  type RetryStep
} from "../../src/transfer/retryDecision.ts"
import type { FaultKind } from "../../src/transfer/TransferFault.ts"

const limits: RetryLimits = {
  maxAttempts: 5,
  maxLinkRefreshes: 3,
  maxRestarts: 3,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  maxRateLimitWaitMs: null
}

const limitsArb: fc.Arbitrary<RetryLimits> = fc.record({
  maxAttempts: fc.integer({ min: 1, max: 8 }),
  maxLinkRefreshes: fc.integer({ min: 0, max: 5 }),
  maxRestarts: fc.integer({ min: 0, max: 5 }),
  backoffBaseMs: fc.integer({ min: 1, max: 5_000 }),
  backoffMaxMs: fc.integer({ min: 5_000, max: 120_000 }),
  maxRateLimitWaitMs: fc.option(fc.integer({ min: 0, max: 600_000 }), { nil: null })
})

const failed = (kind: FaultKind, extra: Partial<FailedAttempt> = {}): FailedAttempt => ({
  kind,
  message: `${kind} happened`,
  noRanges: false,
  ...extra
})

const failedArb: fc.Arbitrary<FailedAttempt> = fc
  .record({
    kind: fc.constantFrom<FaultKind>("link", "restart", "transient", "no-space", "rate-limited", "fatal"),
    message: fc.constantFrom("CDN answered 503", "stalled", "validator changed"),
    noRanges: fc.boolean(),
    retryAfterMillis: fc.option(fc.integer({ min: 0, max: 10 * 60_000 }), { nil: undefined })
  })
  .map(({ retryAfterMillis, ...rest }) => (retryAfterMillis === undefined ? rest : { ...rest, retryAfterMillis }))

const random = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

/** Runs the decisions for `faults` in turn, as the engine does, until one gives up. */
const run = (
  faults: ReadonlyArray<FailedAttempt>,
  randoms: ReadonlyArray<number>,
  l: RetryLimits = limits
): ReadonlyArray<RetryStep> => {
  const steps: Array<RetryStep> = []
  let counts: RetryCounts = NO_RETRIES
  for (const [i, f] of faults.entries()) {
    const step = decideRetry({ failed: f, counts, limits: l, random: randoms[i % randoms.length] ?? 0 })
    steps.push(step)
    counts = step.counts
    if (!triesAgain(step)) break
  }
  return steps
}

const triesAgain = (step: RetryStep): boolean =>
  step.decision._tag === "Backoff" ||
  step.decision._tag === "FreshLink" ||
  step.decision._tag === "Restart" ||
  step.decision._tag === "WaitForRateLimit"

describe("decideRetry", () => {
  it("a call ends: without rate limits, at most maxAttempts - 1 + maxLinkRefreshes + maxRestarts tries again", () => {
    fc.assert(
      fc.property(
        limitsArb,
        fc.array(
          failedArb.filter((f) => f.kind !== "rate-limited"),
          { minLength: 1, maxLength: 40 }
        ),
        fc.array(random, { minLength: 1, maxLength: 5 }),
        (l, faults, randoms) => {
          const steps = run(faults, randoms, l)
          const again = steps.filter(triesAgain).length
          assert.isAtMost(again, l.maxAttempts - 1 + l.maxLinkRefreshes + l.maxRestarts)
          // Every one of them counts as an attempt.
          assert.isTrue(steps.every((s) => s.attempt))
          const last = steps[steps.length - 1]
          if (steps.length < faults.length) assert.isFalse(last === undefined || triesAgain(last))
        }
      )
    )
  })

  it("the same fault kind over and over gives up exactly at its limit, naming the count", () => {
    const repeat = (kind: FaultKind) =>
      run(
        Array.from({ length: 20 }, () => failed(kind)),
        [0.5]
      )
    const transient = repeat("transient")
    assert.strictEqual(transient.length, limits.maxAttempts)
    assert.deepStrictEqual(transient[transient.length - 1]?.decision, {
      _tag: "Park",
      reason: `transient happened (${limits.maxAttempts} attempts)`
    })
    const link = repeat("link")
    assert.strictEqual(link.length, limits.maxLinkRefreshes + 1)
    assert.deepStrictEqual(link[link.length - 1]?.decision, {
      _tag: "Park",
      reason: `link happened after ${limits.maxLinkRefreshes} fresh links`
    })
    const restart = repeat("restart")
    assert.strictEqual(restart.length, limits.maxRestarts + 1)
    assert.deepStrictEqual(restart[restart.length - 1]?.decision, {
      _tag: "Park",
      reason: `restart happened (restarted ${limits.maxRestarts} times)`
    })
    assert.deepStrictEqual(repeat("fatal")[0]?.decision, { _tag: "Park", reason: "fatal happened" })
    assert.deepStrictEqual(repeat("no-space")[0]?.decision, { _tag: "PauseForSpace" })
  })

  it("a transient failure waits a full-jitter backoff of its count, from the bytes written", () => {
    fc.assert(
      fc.property(limitsArb, fc.integer({ min: 0, max: 10 }), random, (l, before, r) => {
        fc.pre(before + 1 < l.maxAttempts)
        const step = decideRetry({
          failed: failed("transient"),
          counts: { ...NO_RETRIES, failures: before },
          limits: l,
          random: r
        })
        assert.deepStrictEqual(step.decision, {
          _tag: "Backoff",
          delayMs: backoffDelay(before + 1, r, l.backoffBaseMs, l.backoffMaxMs)
        })
        assert.isBelow(step.decision._tag === "Backoff" ? step.decision.delayMs : -1, l.backoffMaxMs)
      })
    )
  })

  it("a restart keeps whether Range is ignored", () => {
    for (const noRanges of [true, false]) {
      const step = decideRetry({ failed: failed("restart", { noRanges }), counts: NO_RETRIES, limits, random: 0 })
      assert.deepStrictEqual(step.decision, { _tag: "Restart", noRanges })
    }
  })

  it("the service's rate limit is never an attempt and never parks: waited as asked, or handed back", () => {
    fc.assert(
      fc.property(
        limitsArb,
        fc.array(fc.option(fc.integer({ min: 0, max: 10 * 60_000 }), { nil: undefined }), {
          minLength: 1,
          maxLength: 30
        }),
        random,
        (l, waits, r) => {
          let counts: RetryCounts = NO_RETRIES
          for (const retryAfterMillis of waits) {
            const f = failed("rate-limited", retryAfterMillis === undefined ? {} : { retryAfterMillis })
            const step = decideRetry({ failed: f, counts, limits: l, random: r })
            assert.isFalse(step.attempt)
            assert.strictEqual(step.counts.failures, 0)
            assert.strictEqual(step.counts.linkRefreshes, 0)
            assert.strictEqual(step.counts.restarts, 0)
            const d = step.decision
            assert.isTrue(d._tag === "WaitForRateLimit" || d._tag === "RateLimited", d._tag)
            const delayMs = d._tag === "WaitForRateLimit" || d._tag === "RateLimited" ? d.delayMs : -1
            if (retryAfterMillis !== undefined) assert.strictEqual(delayMs, retryAfterMillis)
            const tooLong = l.maxRateLimitWaitMs !== null && delayMs > l.maxRateLimitWaitMs
            assert.strictEqual(d._tag, tooLong ? "RateLimited" : "WaitForRateLimit")
            counts = step.counts
          }
        }
      )
    )
  })

  it("a wait the service named is no step of the rate limit's own backoff", () => {
    const named = decideRetry({
      failed: failed("rate-limited", { retryAfterMillis: 120_000 }),
      counts: NO_RETRIES,
      limits,
      random: 0.5
    })
    const unnamed = decideRetry({ failed: failed("rate-limited"), counts: named.counts, limits, random: 0.5 })
    assert.deepStrictEqual(unnamed.decision, {
      _tag: "WaitForRateLimit",
      delayMs: backoffDelay(1, 0.5, limits.backoffBaseMs, limits.backoffMaxMs)
    })
  })

  it("rate-limit waits between failures change neither the give-up point nor the backoff steps", () => {
    fc.assert(
      fc.property(
        fc.array(
          failedArb.filter((f) => f.kind !== "rate-limited"),
          { minLength: 1, maxLength: 20 }
        ),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        (faults, limitedBefore) => {
          const plain = run(faults, [0.5])
          const interleaved = faults.flatMap((f, i) =>
            limitedBefore[i % limitedBefore.length] === true
              ? [failed("rate-limited", { retryAfterMillis: 1 }), f]
              : [f]
          )
          const withWaits = run(interleaved, [0.5]).filter((s) => s.attempt)
          assert.deepStrictEqual(
            withWaits.map((s) => s.decision),
            plain.map((s) => s.decision)
          )
        }
      )
    )
  })
})
