/**
 * Deliveries to receivers outside the service (media servers, notification targets): one
 * HTTP exchange through ApiTransport's wire (no credential of the service ever goes there),
 * retried by the program's one backoff, and logged once when it fails.
 *
 * Invariants:
 * - A delivery never fails its caller: after DELIVERY_ATTEMPTS it is given up, with the reason
 *   in the log.
 * - Log lines name the receiver by `name` alone (never a URL: webhook URLs carry secrets).
 * - The waits are Effect's Clock (TestClock in tests).
 */
import { Data, Effect, Random } from "effect"
import type { WireAnswer, WireFailure, WireRequest } from "../api/ApiTransport.ts"
import { ApiTransport } from "../api/ApiTransport.ts"
import { backoffDelay } from "../pacing/backoff.ts"

export const DELIVERY_ATTEMPTS = 5
export const DELIVERY_BACKOFF_BASE_MS = 2_000
export const DELIVERY_BACKOFF_MAX_MS = 60_000
export const DELIVERY_TIMEOUT_MS = 15_000
const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/** A refused or failed exchange, in one line without secrets. */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{ readonly reason: string }> {}

/** One exchange; any answer but 2xx is a failure naming the status. */
export const exchangeOk = (
  request: Omit<WireRequest, "timeoutMs" | "maxBytes">
): Effect.Effect<WireAnswer, DeliveryFailed, ApiTransport> =>
  Effect.flatMap(Effect.service(ApiTransport), (wire) =>
    wire.exchange({ ...request, timeoutMs: DELIVERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES }).pipe(
      Effect.mapError((failure) => new DeliveryFailed({ reason: describeWireFailure(failure) })),
      Effect.flatMap((answer) =>
        answer.status >= 200 && answer.status < 300
          ? Effect.succeed(answer)
          : Effect.fail(new DeliveryFailed({ reason: `HTTP ${answer.status}${snippet(answer.text)}` }))
      )
    )
  )

/** Runs `attempt` until it succeeds or DELIVERY_ATTEMPTS failed; logs the first failure and the giving up. */
export const retryDelivery = Effect.fnUntraced(function* <R>(
  name: string,
  what: string,
  attempt: Effect.Effect<void, DeliveryFailed, R>
): Effect.fn.Return<boolean, never, R> {
  for (let n = 1; ; n++) {
    const result = yield* Effect.result(attempt)
    if (result._tag === "Success") {
      if (n > 1) yield* Effect.logInfo(`${name}: ${what} done at attempt ${n}`)
      return true
    }
    const reason = result.failure.reason
    if (n >= DELIVERY_ATTEMPTS) {
      yield* Effect.logError(`${name}: ${what} failed ${n} times, given up: ${reason}`)
      return false
    }
    if (n === 1) yield* Effect.logWarning(`${name}: ${what} failed, retrying: ${reason}`)
    yield* Effect.sleep(backoffDelay(n, yield* Random.next, DELIVERY_BACKOFF_BASE_MS, DELIVERY_BACKOFF_MAX_MS))
  }
})

const describeWireFailure = (failure: WireFailure): string => {
  const cause = failure.cause
  const code = cause instanceof Error && "code" in cause ? ` (${String(cause.code)})` : ""
  switch (failure.stage) {
    case "connect":
      return `cannot connect${code}`
    case "timeout":
      return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`
    case "too-large":
      return "answer too large"
    case "body":
      return `answer broke off${code}`
    case "invalid":
      return "invalid request"
  }
}

/** The start of an error answer, on one line, for the log. */
const snippet = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim().slice(0, 200)
  return line === "" ? "" : `: ${line}`
}
