/**
 * The rate-limit gates of one API client, one per rate-limit group (the arithmetic of one
 * gate is rateGate.ts): every attempt passes its group's gate first, and a 429 closes it.
 */
import { Clock, Duration, Effect } from "effect"
import { ApiError, RateLimited } from "./ApiError.ts"
import { admit, closeGate, type RateGate, rateLimitGroup } from "./rateGate.ts"

export interface RateGates {
  /**
   * Waits until the group's gate lets one request through; succeeds with the milliseconds
   * waited. A wait beyond `maxInlineWaitMs` fails at once with RateLimited (nothing sent),
   * the time left as its delay.
   */
  readonly pass: (operation: string, maxInlineWaitMs: number) => Effect.Effect<number, ApiError>
  /** A 429 holds back every request of its group (see rateGate.ts). */
  readonly close: (operation: string, retryAfterMillis: number | undefined) => Effect.Effect<void>
}

export const makeRateGates = (): RateGates => {
  /** Rate-limit groups held back by a 429, by group; an open group has no entry. */
  const gates = new Map<string, RateGate>()

  const pass = Effect.fnUntraced(function* (
    operation: string,
    maxInlineWaitMs: number
  ): Effect.fn.Return<number, ApiError> {
    const group = rateLimitGroup(operation)
    let waited = 0
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const { gate, waitMs } = admit(gates.get(group), now)
      if (gate === undefined) gates.delete(group)
      else gates.set(group, gate)
      if (waitMs === 0) break
      if (waited + waitMs > maxInlineWaitMs) {
        return yield* new ApiError({
          operation,
          reason: new RateLimited({
            status: 429,
            message: "rate limit reached: the service asked to wait (Retry-After) after an earlier request",
            retryAfterMillis: waitMs
          })
        })
      }
      waited += waitMs
      yield* Effect.sleep(Duration.millis(waitMs))
    }
    return waited
  })

  const close = Effect.fnUntraced(function* (operation: string, retryAfterMillis: number | undefined) {
    const group = rateLimitGroup(operation)
    const now = yield* Clock.currentTimeMillis
    const before = gates.get(group)
    const after = closeGate(before, now, retryAfterMillis)
    gates.set(group, after)
    if (before === undefined || before.pausedUntil <= now) {
      yield* Effect.logInfo("rate limited: holding these requests until Retry-After passes").pipe(
        Effect.annotateLogs({ operation, waitMillis: after.pausedUntil - now })
      )
    }
  })

  return { pass, close }
}
