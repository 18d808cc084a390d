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
 * Bounded: at most MAX_CONNECTIONS connections (the service keeps one delivery in flight
 * per origin); a request head must arrive within HEADERS_TIMEOUT_MS and its body within
 * BODY_TIMEOUT, so a slow sender holds one connection for seconds, not for ever; 408 and
 * 413 close the connection. Rejections are logged at most once a minute per reason (the
 * receiver may face the Internet), never with a header or a secret.
 *
 * Lifetime: listens when the layer is built (after the store opens); a listen failure
 * fails the layer with WebhookReceiverError (exit 78, like `server.listen`).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Context, Duration, Effect, Layer, Option, type Redacted, Schema, Stream } from "effect"
import { HttpRouter, HttpServer, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { webhookKeys } from "../domain/WebhookSecret.ts"
import { PollRequests } from "../events/PollRequests.ts"
import { formatListen, isLoopback, type ListenAddress, type ListenSetting } from "../server/ListenAddress.ts"
import { listenFailure } from "../server/listenFailure.ts"
import { NodeHttp } from "../server/nodeHttp.ts"
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

export class WebhookReceiverError extends Schema.TaggedError<WebhookReceiverError>()("WebhookReceiverError", {
  /** The configured address, as written in `webhooks.listen`. */
  listen: Schema.String,
  code: Schema.UndefinedOr(Schema.String),
  message: Schema.String
}) {}

export class WebhookReceiver extends Context.Service<
  WebhookReceiver,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8687"; undefined when the receiver is off. */
    readonly url: string | undefined
  }
>()("dlsync/webhooks/WebhookReceiver") {
  static readonly layer = (
    options: WebhookReceiverOptions
  ): Layer.Layer<WebhookReceiver, WebhookReceiverError, Database> =>
    options.listen === "off"
      ? Layer.succeed(WebhookReceiver, WebhookReceiver.of({ url: undefined }))
      : listening(options.listen, options)
}

/** A body larger than this is refused (413); deliveries are a small JSON snapshot. */
export const MAX_BODY_BYTES = 1024 * 1024

/** The whole body must arrive within this long of the request head (408). */
export const BODY_TIMEOUT = Duration.seconds(10)

/** A connection must send a complete request head within this long, or it is closed. */
export const HEADERS_TIMEOUT_MS = 10_000

/** The most connections held at once; more are closed as they arrive. */
export const MAX_CONNECTIONS = 16

/** A delivery id is remembered this long past its timestamp's tolerance window (clock skew). */
export const DEDUP_MARGIN_SECONDS = 60

/** How often one kind of rejection is logged at most. */
const REJECTION_LOG_INTERVAL_MS = 60_000

const SHUTDOWN_GRACE = Duration.seconds(2)

const listening = (
  address: ListenAddress,
  options: WebhookReceiverOptions
): Layer.Layer<WebhookReceiver, WebhookReceiverError, Database> => {
  const bodyTimeout = Duration.fromInputUnsafe(options.bodyTimeout ?? BODY_TIMEOUT)
  const server = Layer.effect(
    HttpServer.HttpServer,
    NodeHttpServer.make(() => boundedServer(Duration.toMillis(bodyTimeout)), {
      port: address.port,
      ...(address.host === undefined ? {} : { host: address.host }),
      gracefulShutdownTimeout: SHUTDOWN_GRACE
    }).pipe(Effect.mapError((error) => listenError(address, error.cause)))
  )
  const serving = HttpRouter.serve(
    routes({
      keys: webhookKeys(options.secrets),
      maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
      bodyTimeout
    }),
    { disableLogger: true, disableListenLog: true }
  )
  const announced = Layer.effect(
    WebhookReceiver,
    Effect.gen(function* () {
      const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
      yield* Effect.logInfo(
        `webhook receiver listening on ${url}${isLoopback(address) ? "" : " (reachable from other hosts)"}`
      )
      return WebhookReceiver.of({ url })
    })
  )
  return Layer.merge(serving, announced).pipe(Layer.provide(server))
}

interface Limits {
  readonly keys: ReadonlyArray<Uint8Array>
  readonly maxBodyBytes: number
  readonly bodyTimeout: Duration.Duration
}

const routes = (limits: Limits) =>
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
        return reply(status, reason, status === 408 || status === 413 ? CLOSE : {})
      })

      const receive = Effect.fnUntraced(function* (request: HttpServerRequest.HttpServerRequest) {
        if (request.method !== "POST") return reply(405, "method not allowed", { allow: "POST" })
        const declared = request.headers["content-length"]
        if (declared !== undefined && Number(declared) > limits.maxBodyBytes) {
          return yield* rejected(413, `body larger than ${limits.maxBodyBytes} bytes`)
        }
        const body = yield* readBody(request, limits.maxBodyBytes).pipe(
          Effect.timeoutOrElse({ duration: limits.bodyTimeout, orElse: () => Effect.succeed("too slow" as const) }),
          Effect.catchTag("BodyTooLarge", () => Effect.succeed("too large" as const)),
          Effect.catch(() => Effect.succeed("unreadable" as const))
        )
        if (body === "too slow") return yield* rejected(408, "body not received in time")
        if (body === "too large") return yield* rejected(413, `body larger than ${limits.maxBodyBytes} bytes`)
        if (body === "unreadable") return yield* rejected(400, "body could not be read")
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

class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()("BodyTooLarge", {}) {}

/** The raw body bytes, failing with BodyTooLarge as soon as more than `max` arrived. */
const readBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Stream.runFoldEffect(
    request.stream,
    (): { chunks: Array<Uint8Array>; size: number } => ({ chunks: [], size: 0 }),
    (acc, chunk) => {
      acc.size += chunk.length
      acc.chunks.push(chunk)
      return acc.size > max ? Effect.fail(new BodyTooLarge()) : Effect.succeed(acc)
    }
  ).pipe(Effect.map((acc) => Buffer.concat(acc.chunks, acc.size)))

/** The payload's event type for the log line (the spec names no payload field; "event" when absent). */
const eventType = (body: Uint8Array): string =>
  Option.match(decodeEvent(Buffer.from(body).toString("utf8")), {
    onNone: () => "event",
    onSome: (event) => event.type.replace(/[^\w.-]/g, "?").slice(0, 64)
  })

const decodeEvent = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ type: Schema.String })))

const CLOSE = { connection: "close" }

const reply = (status: number, reason: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(`${reason}\n`, { status, headers: { "cache-control": "no-store", ...headers } })

const boundedServer = (bodyTimeoutMs: number) => {
  const server = NodeHttp.createServer({
    headersTimeout: HEADERS_TIMEOUT_MS,
    // A backstop behind the body timeout, which answers 408 itself.
    requestTimeout: HEADERS_TIMEOUT_MS + bodyTimeoutMs + 5_000,
    keepAliveTimeout: 5_000,
    connectionsCheckingInterval: 1_000
  })
  server.maxConnections = MAX_CONNECTIONS
  return server
}

const listenError = (address: ListenAddress, cause: unknown): WebhookReceiverError => {
  const listen = formatListen(address)
  const { code, why } = listenFailure(cause)
  return new WebhookReceiverError({
    listen,
    code,
    message: `cannot listen on ${listen} (webhooks.listen): ${why}; choose another address or set it to "off"`
  })
}
