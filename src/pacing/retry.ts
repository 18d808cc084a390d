/**
 * The program's one way to try again. A retry policy is a pure decider: given a failure,
 * the number of attempts it ended (1 for the first) and a random draw in [0, 1), it names the
 * wait before the next attempt in milliseconds, or gives up (undefined). `retrySchedule`
 * makes an Effect Schedule of it, so every loop that tries again is `Effect.retry(attempt,
 * retrySchedule(policy))`: the waits go through Effect's Clock (TestClock in tests) and the
 * randomness through Effect's Random.
 *
 * `backoff` is the common policy: a count of attempts, the failures worth another, and the
 * program's full-jitter exponential wait (backoff.ts). Deciders with more to weigh (the API
 * client's Retry-After and idempotency, api/retryPolicy.ts) are policies of their own.
 */
import { Cause, Duration, Effect, Random, Schedule } from "effect"
import { backoffDelay } from "./backoff.ts"

/** The wait (ms) before the next attempt after `failure` ended attempt `attempt`, or undefined to give up. */
export type RetryPolicy<E> = (failure: E, attempt: number, random: number) => number | undefined

export interface BackoffOptions<E> {
  /** Attempts in all, the first included. */
  readonly attempts: number
  readonly baseMs: number
  readonly maxMs: number
  /** Whether a failure is worth another attempt; every one when absent. */
  readonly retryOn?: (failure: E) => boolean
}

/** Full-jitter exponential backoff for `attempts` attempts at most, on the failures `retryOn` accepts. */
export const backoff =
  <E>(options: BackoffOptions<E>): RetryPolicy<E> =>
  (failure, attempt, random) =>
    attempt >= options.attempts || options.retryOn?.(failure) === false
      ? undefined
      : backoffDelay(attempt, random, options.baseMs, options.maxMs)

/**
 * The schedule of a policy; `onRetry` runs before each wait (a count, a log line), with the
 * failure, the attempt it ended and the wait.
 */
export const retrySchedule = <E, R = never>(
  policy: RetryPolicy<E>,
  onRetry?: (failure: E, attempt: number, waitMs: number) => Effect.Effect<void, never, R>
): Schedule.Schedule<number, E, never, R> =>
  Schedule.fromStepWithMetadata(
    Effect.succeed((meta: Schedule.InputMetadata<E>) =>
      Effect.flatMap(Random.next, (random) => {
        const waitMs = policy(meta.input, meta.attempt, random)
        if (waitMs === undefined) return Cause.done(meta.attempt)
        const next = Effect.succeed<[number, Duration.Duration]>([meta.attempt, Duration.millis(waitMs)])
        return onRetry === undefined ? next : Effect.andThen(onRetry(meta.input, meta.attempt, waitMs), next)
      })
    )
  )

/** `attempt`, tried again by `policy` until it succeeds or the policy gives up (then its last failure). */
export const retrying = <A, E, R, R2 = never>(
  attempt: Effect.Effect<A, E, R>,
  policy: RetryPolicy<E>,
  onRetry?: (failure: E, attempt: number, waitMs: number) => Effect.Effect<void, never, R2>
): Effect.Effect<A, E, R | R2> => Effect.retry(attempt, retrySchedule(policy, onRetry))
