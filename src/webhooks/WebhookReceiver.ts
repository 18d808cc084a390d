/**
 * The receiver of the service's webhook deliveries (`[webhooks] listen`): a POST to its
 * root path that verifies wakes a poll of the change feed, and that is all it does. The
 * payload is not trusted for anything: the feed stays the truth.
 *
 *   POST / ─► Content-Length > MAX_BODY_BYTES? ─► 413 (the body is not read)
 *      │
 *   read the raw body: more than MAX_BODY_BYTES ─► 413; not all there in BODY_TIMEOUT ─► 408
 *      │
 *   verifyDelivery (signature, timestamp) ─► 400 / 401 with a fixed reason
 *      │
 *   webhook-id seen before (webhook_deliveries)? ─► 200 "duplicate", nothing else
 *      │ no: record it
 *   PollRequests.request ─► 200 "accepted" (the poll runs after the answer, on the daemon)
 *
 * Other methods: 405; other paths: 404.
 *
 * An id is remembered for as long as a delivery carrying it could verify (its timestamp's
 * tolerance window, plus DEDUP_MARGIN_SECONDS), so a captured delivery cannot be replayed.
 * The service redelivering an event much later (it never saw our 2xx) signs it afresh and
 * is acted on again: one more poll, which the feed makes harmless.
 *
 * No Host check, unlike the status server (HostCheck.ts): behind a reverse proxy or a
 * tunnel every delivery carries the public name as Host, which the receiver cannot know
 * in advance. The check guards readable answers against DNS rebinding; here nothing is
 * readable (the answers are fixed short texts) and nothing happens without a signature
 * made with the secret, so a rebound page gains nothing. The signature is the gate.
 *
 * Bounded: the body is read before anything can be verified, so within MAX_BODY_BYTES and
 * BODY_TIMEOUT (server/requestBody.ts): a slow sender holds one connection for seconds, not
 * for ever; 408 and 413 close the connection. Connections and header timeouts are those of
 * every local server (server/LocalServer.ts). Rejections are logged at most once a minute
 * per reason (the receiver may face the Internet), never with a header or a secret.
 *
 * Lifetime: listens when the layer is built (after the store opens); a listen failure
 * fails the layer with HealthServerError naming webhooks.listen (exit 78, one line).
 */
import { Clock, Context, Duration, Effect, Layer, Option, type Redacted, Result, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { webhookKeys } from "../domain/WebhookSecret.ts"
import { PollRequests } from "../events/PollRequests.ts"
import type { ListenAddress, ListenSetting } from "../server/ListenAddress.ts"
import { HEADERS_TIMEOUT_MS, type HealthServerError, serveLocally } from "../server/LocalServer.ts"
import { type BodyRefused, CLOSE_CONNECTION, readBody } from "../server/requestBody.ts"
import { Database } from "../store/Database.ts"
import { makeWebhookDeliveryTable } from "../store/webhookDeliveryTable.ts"
import { TOLERANCE_SECONDS, verifyDelivery } from "./verifyDelivery.ts"

export interface WebhookReceiverOptions {
  readonly listen: ListenSetting
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  /** Tests shrink these; the defaults are the constants below. */
  readonly maxBodyBytes?: number
  readonly bodyTimeout?: Duration.Input
}

export class WebhookReceiver extends Context.Service<
  WebhookReceiver,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8687"; undefined when the receiver is off. */
    readonly url: string | undefined
  }
>()("dlsync/webhooks/WebhookReceiver") {
  static readonly layer = (
    options: WebhookReceiverOptions
  ): Layer.Layer<WebhookReceiver, HealthServerError, Database | PollRequests> =>
    options.listen === "off"
      ? Layer.succeed(WebhookReceiver, WebhookReceiver.of({ url: undefined }))
      : listening(options.listen, options)
}

/** A body larger than this is refused (413); deliveries are a small JSON snapshot. */
export const MAX_BODY_BYTES = 1024 * 1024

/** The whole body must arrive within this long of the request head (408). */
export const BODY_TIMEOUT = Duration.seconds(10)

/** A delivery id is remembered this long past its timestamp's tolerance window (clock skew). */
export const DEDUP_MARGIN_SECONDS = 60

/** How often one kind of rejection is logged at most. */
const REJECTION_LOG_INTERVAL_MS = 60_000

const listening = (
  address: ListenAddress,
  options: WebhookReceiverOptions
): Layer.Layer<WebhookReceiver, HealthServerError, Database | PollRequests> => {
  const bodyTimeout = Duration.fromInputUnsafe(options.bodyTimeout ?? BODY_TIMEOUT)
  const routes = receiverRoutes({
    keys: webhookKeys(options.secrets),
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    bodyTimeout
  })
  return Layer.effect(
    WebhookReceiver,
    Effect.map(
      serveLocally(
        {
          listen: address,
          setting: "webhooks.listen",
          name: "webhook receiver",
          // A backstop behind the body timeout, which answers 408 itself.
          requestTimeoutMs: HEADERS_TIMEOUT_MS + Duration.toMillis(bodyTimeout) + 5_000
        },
        routes
      ),
      (url) => WebhookReceiver.of({ url })
    )
  )
}

interface Limits {
  readonly keys: ReadonlyArray<Uint8Array>
  readonly maxBodyBytes: number
  readonly bodyTimeout: Duration.Duration
}

const receiverRoutes = (limits: Limits) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const { db } = yield* Database
      const deliveries = makeWebhookDeliveryTable(db)
      const requests = yield* PollRequests
      const lastLogged = new Map<string, number>()

      const rejected = Effect.fnUntraced(function* (status: number, reason: string) {
        const now = yield* Clock.currentTimeMillis
        if (now - (lastLogged.get(reason) ?? -Infinity) >= REJECTION_LOG_INTERVAL_MS) {
          lastLogged.set(reason, now)
          yield* Effect.logWarning(`webhook delivery refused (${status}): ${reason}`)
        }
        return reply(status, reason, status === 408 || status === 413 ? CLOSE_CONNECTION : {})
      })

      const receive = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
        if (request.method !== "POST") return reply(405, "method not allowed", { allow: "POST" })
        const read = yield* Effect.result(
          readBody(request, { maxBytes: limits.maxBodyBytes, timeout: limits.bodyTimeout })
        )
        if (Result.isFailure(read)) return yield* rejected(read.failure.status, refusal(read.failure, limits))
        const body = read.success
        const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const verdict = verifyDelivery({
          headers: {
            id: request.headers["webhook-id"],
            timestamp: request.headers["webhook-timestamp"],
            signature: request.headers["webhook-signature"]
          },
          body,
          keys: limits.keys,
          nowSeconds
        })
        if (verdict._tag === "Rejected") return yield* rejected(verdict.status, verdict.reason)
        const keepUntil = verdict.timestamp + TOLERANCE_SECONDS + DEDUP_MARGIN_SECONDS
        if (!deliveries.remember(verdict.id, keepUntil, nowSeconds)) {
          yield* Effect.logDebug(`webhook ${verdict.id}: a duplicate, already acted on`)
          return reply(200, "duplicate")
        }
        yield* requests.request
        yield* Effect.logInfo(`webhook ${eventType(body)} (${verdict.id}): polling the account`)
        return reply(200, "accepted")
      })

      yield* router.add("*", "/", receive)
      yield* router.add("*", "*", () => Effect.succeed(reply(404, "not found")))
    })
  )

// ---------------------------------------------------------------------------------------

/** Why a body was refused, in the rejection's fixed words. */
const refusal = (refused: BodyRefused, limits: Limits): string => {
  switch (refused.reason) {
    case "TooLarge":
      return `body larger than ${limits.maxBodyBytes} bytes`
    case "TooSlow":
      return "body not received in time"
    case "Unreadable":
      return "body could not be read"
  }
}

/** The payload's event type for the log line (the spec names no payload field; "event" when absent). */
const eventType = (body: Uint8Array): string =>
  Option.match(decodeEvent(Buffer.from(body).toString("utf8")), {
    onNone: () => "event",
    onSome: (event) => event.type.replace(/[^\w.-]/g, "?").slice(0, 64)
  })

const decodeEvent = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ type: Schema.String })))

const reply = (status: number, reason: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(`${reason}\n`, { status, headers: { "cache-control": "no-store", ...headers } })
