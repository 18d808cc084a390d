/**
 * Deliveries to receivers outside the service (media servers, notification targets): one
 * exchange through the outbound client (Outbound.ts: no credential of the service ever goes
 * there), retried by the program's one backoff, and logged once when it fails.
 *
 * Invariants:
 * - A delivery never fails its caller: after DELIVERY_ATTEMPTS it is given up, with the reason
 *   in the log.
 * - Log lines name the receiver by `name` alone (never a URL: webhook URLs carry secrets); an
 *   error answer is quoted only as `errorSnippet` gives it (scrubbed of what was sent, cut).
 * - The waits are Effect's Clock (TestClock in tests).
 */
import { Data, Effect } from "effect"
import { backoff, retrying } from "../pacing/retry.ts"
import { errorSnippet, Outbound, type OutboundAnswer, type OutboundRequest } from "./Outbound.ts"

export const DELIVERY_ATTEMPTS = 5
export const DELIVERY_BACKOFF_BASE_MS = 2_000
export const DELIVERY_BACKOFF_MAX_MS = 60_000
export const DELIVERY_TIMEOUT_MS = 15_000
const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/** A refused or failed exchange, in one line without secrets. */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{ readonly reason: string }> {}

/** One exchange; any answer but 2xx is a failure naming the status. */
export const exchangeOk = Effect.fnUntraced(function* (
  delivery: Omit<OutboundRequest, "timeoutMs" | "maxBytes" | "redirects">
): Effect.fn.Return<OutboundAnswer, DeliveryFailed, Outbound> {
  const client = yield* Outbound
  const request: OutboundRequest = { ...delivery, timeoutMs: DELIVERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES }
  const answer = yield* client
    .send(request)
    .pipe(Effect.mapError((failure) => new DeliveryFailed({ reason: failure.reason })))
  if (answer.status >= 200 && answer.status < 300) return answer
  return yield* new DeliveryFailed({ reason: `HTTP ${answer.status}${errorSnippet(request, answer)}` })
})

/** Runs `attempt` until it succeeds or DELIVERY_ATTEMPTS failed; logs the first failure and the giving up. */
export const retryDelivery = <R>(
  name: string,
  what: string,
  attempt: Effect.Effect<void, DeliveryFailed, R>
): Effect.Effect<boolean, never, R> =>
  Effect.suspend(() => {
    let retries = 0
    return retrying(
      attempt,
      backoff({ attempts: DELIVERY_ATTEMPTS, baseMs: DELIVERY_BACKOFF_BASE_MS, maxMs: DELIVERY_BACKOFF_MAX_MS }),
      (failure, n) => {
        retries = n
        return n === 1 ? Effect.logWarning(`${name}: ${what} failed, retrying: ${failure.reason}`) : Effect.void
      }
    ).pipe(
      Effect.flatMap(() =>
        retries > 0
          ? Effect.as(Effect.logInfo(`${name}: ${what} done at attempt ${retries + 1}`), true)
          : Effect.succeed(true)
      ),
      Effect.catch((failure) =>
        Effect.as(
          Effect.logError(`${name}: ${what} failed ${DELIVERY_ATTEMPTS} times, given up: ${failure.reason}`),
          false
        )
      )
    )
  })
