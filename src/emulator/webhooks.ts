/**
 * Webhook delivery for the terminal download events, as the spec's "Events" section says.
 *
 *   enqueue ─► per-origin queue ─► one request in flight ─► 2xx: done
 *                    ▲                                    ├► conn. failure / 408 / 425 / 429 / 5xx:
 *                    │                                    │    the origin pauses (shared backoff with
 *                    │                                    │    jitter, 1 min doubling to 1 h, or
 *                    │                                    │    Retry-After up to 24 h); event stays first
 *                    └────────────────────────────────────┴► other status: this event alone backs off
 *
 * Invariants:
 * - At least once: an event leaves its queue only on a 2xx; no attempt cap, no expiry.
 * - The body bytes are fixed at enqueue; each attempt signs them afresh with a new
 *   `webhook-timestamp`: `v1,` base64 HMAC-SHA256 over `id.timestamp.body` under the
 *   base64-decoded secret after `whsec_`.
 * - Per origin at most one request in flight and at least `minIntervalMs` (1 s) from the
 *   end of one request to the start of the next. Redirects are not followed.
 * - Receivers must be public https URLs; plain http to a loopback address is allowed only
 *   with `allowLoopbackHttp` (tests and local experiments).
 * Delays are options so tests run in milliseconds; timestamps use the emulator's clock.
 */
import { createHmac, randomBytes } from "node:crypto"
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { isPublicHost } from "../domain/webhookUrl.ts"

export const WEBHOOK_EVENTS = ["download.completed", "download.failed", "download.canceled"] as const
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number]

export interface WebhookOptions {
  /** Emulator time in ms, for `webhook-timestamp`. */
  readonly now: () => number
  readonly allowLoopbackHttp?: boolean
  readonly minIntervalMs?: number
  readonly backoffBaseMs?: number
  readonly backoffMaxMs?: number
  readonly retryAfterMaxMs?: number
  /** Milliseconds per Retry-After second (1000; tests shrink it). */
  readonly retryAfterUnitMs?: number
  readonly requestTimeoutMs?: number
  /** Uniform [0, 1) for jitter. */
  readonly random?: () => number
  /** Called after every attempt (tests wait on it). */
  readonly onAttempt?: (attempt: WebhookAttempt) => void
}

/** The delays `configure` may change. */
export type WebhookDelays = Partial<
  Pick<
    WebhookOptions,
    "minIntervalMs" | "backoffBaseMs" | "backoffMaxMs" | "retryAfterMaxMs" | "retryAfterUnitMs" | "requestTimeoutMs"
  >
>

export interface WebhookAttempt {
  readonly eventId: string
  readonly url: string
  /** Wall-clock ms when the request started. */
  readonly startedAt: number
  /** The response status, or why there was none. */
  readonly outcome: number | "connection_error" | "timeout"
}

export class WebhookSender {
  readonly attempts: Array<WebhookAttempt> = []
  /** Settable at run time (the emulator option and tests). */
  allowLoopbackHttp: boolean
  #options: Required<Omit<WebhookOptions, "allowLoopbackHttp" | "onAttempt">>
  readonly #onAttempt: ((attempt: WebhookAttempt) => void) | undefined
  readonly #secrets = new Map<string, string>()
  readonly #origins = new Map<string, OriginQueue>()
  readonly #idle = new Set<() => void>()
  #disposed = false

  constructor(options: WebhookOptions) {
    this.allowLoopbackHttp = options.allowLoopbackHttp ?? false
    this.#onAttempt = options.onAttempt
    this.#options = {
      now: options.now,
      minIntervalMs: options.minIntervalMs ?? 1000,
      backoffBaseMs: options.backoffBaseMs ?? 60_000,
      backoffMaxMs: options.backoffMaxMs ?? 3_600_000,
      retryAfterMaxMs: options.retryAfterMaxMs ?? 86_400_000,
      retryAfterUnitMs: options.retryAfterUnitMs ?? 1000,
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      random: options.random ?? Math.random
    }
  }

  /** Changes delivery delays at run time (the control API; integration tests shrink them). */
  configure(delays: WebhookDelays): void {
    const o = this.#options
    this.#options = {
      ...o,
      minIntervalMs: delays.minIntervalMs ?? o.minIntervalMs,
      backoffBaseMs: delays.backoffBaseMs ?? o.backoffBaseMs,
      backoffMaxMs: delays.backoffMaxMs ?? o.backoffMaxMs,
      retryAfterMaxMs: delays.retryAfterMaxMs ?? o.retryAfterMaxMs,
      retryAfterUnitMs: delays.retryAfterUnitMs ?? o.retryAfterUnitMs,
      requestTimeoutMs: delays.requestTimeoutMs ?? o.requestTimeoutMs
    }
  }

  /** The signing secret of a credential (`apiKey:<user>` or `oauth:<client>`), made on first use. */
  secretFor(credential: string): string {
    const existing = this.#secrets.get(credential)
    if (existing !== undefined) return existing
    const secret = `whsec_${randomBytes(32).toString("base64")}`
    this.#secrets.set(credential, secret)
    return secret
  }

  /** Why a receiver URL is refused, or undefined when it is acceptable. */
  urlProblem(url: string): string | undefined {
    return webhookUrlProblem(url, this.allowLoopbackHttp)
  }

  /** Queues one event for delivery; its body bytes are fixed now. */
  enqueue(
    url: string,
    credential: string,
    event: { readonly id: string; readonly type: WebhookEventType; readonly data: unknown }
  ): void {
    if (this.#disposed) return
    const body = Buffer.from(
      JSON.stringify({
        id: event.id,
        type: event.type,
        created_at: new Date(this.#options.now()).toISOString(),
        data: event.data
      })
    )
    const origin = new URL(url).origin
    const queue = this.#origins.get(origin) ?? newQueue()
    this.#origins.set(origin, queue)
    queue.deliveries.push({ eventId: event.id, url, credential, body, notBefore: 0, failures: 0 })
    this.#pump(origin, queue)
  }

  /** Events not yet acknowledged, over all origins. */
  pending(): number {
    let n = 0
    for (const q of this.#origins.values()) n += q.deliveries.length
    return n
  }

  /** Resolves once nothing is pending (for tests and shutdown). */
  whenIdle(): Promise<void> {
    if (this.pending() === 0) return Promise.resolve()
    return new Promise((resolve) => {
      this.#idle.add(resolve)
    })
  }

  /** Stops every timer and request; pending events are dropped. */
  dispose(): void {
    this.#disposed = true
    for (const q of this.#origins.values()) {
      if (q.timer !== undefined) clearTimeout(q.timer)
      q.inFlight?.destroy()
    }
    this.#origins.clear()
  }

  #pump(origin: string, queue: OriginQueue): void {
    if (this.#disposed || queue.inFlight !== undefined) return
    if (queue.timer !== undefined) {
      clearTimeout(queue.timer)
      queue.timer = undefined
    }
    if (queue.deliveries.length === 0) {
      // The queue stays: its pacing and backoff state must outlive a drained moment.
      if (this.pending() === 0) {
        for (const resolve of this.#idle) resolve()
        this.#idle.clear()
      }
      return
    }
    const now = Date.now()
    const earliestEvent = Math.min(...queue.deliveries.map((d) => d.notBefore))
    const at = Math.max(queue.nextAllowedAt, queue.pausedUntil, earliestEvent)
    if (at > now) {
      queue.timer = setTimeout(() => {
        queue.timer = undefined
        this.#pump(origin, queue)
      }, at - now)
      queue.timer.unref()
      return
    }
    const index = queue.deliveries.findIndex((d) => d.notBefore <= now)
    const delivery = queue.deliveries[index]
    if (delivery === undefined) return
    this.#send(delivery, queue, (outcome, retryAfterMs) => {
      queue.inFlight = undefined
      queue.nextAllowedAt = Date.now() + this.#options.minIntervalMs
      this.#settle(queue, delivery, outcome, retryAfterMs)
      this.#pump(origin, queue)
    })
  }

  #settle(
    queue: OriginQueue,
    delivery: Delivery,
    outcome: WebhookAttempt["outcome"],
    retryAfterMs: number | undefined
  ): void {
    const index = queue.deliveries.indexOf(delivery)
    if (typeof outcome === "number" && outcome >= 200 && outcome < 300) {
      queue.deliveries.splice(index, 1)
      queue.backoffLevel = 0
      return
    }
    const now = Date.now()
    if (typeof outcome !== "number" || SHARED_BACKOFF_STATUSES.has(outcome) || outcome >= 500) {
      queue.backoffLevel++
      const delay =
        retryAfterMs !== undefined
          ? Math.min(retryAfterMs, this.#options.retryAfterMaxMs)
          : this.#backoff(queue.backoffLevel)
      queue.pausedUntil = now + delay
      return
    }
    delivery.failures++
    delivery.notBefore = now + this.#backoff(delivery.failures)
    queue.deliveries.splice(index, 1)
    queue.deliveries.push(delivery)
  }

  /** base · 2^(n−1), capped, with ±20 % jitter. */
  #backoff(n: number): number {
    const raw = Math.min(this.#options.backoffMaxMs, this.#options.backoffBaseMs * 2 ** Math.min(n - 1, 30))
    return Math.min(this.#options.backoffMaxMs, Math.round(raw * (0.8 + 0.4 * this.#options.random())))
  }

  #send(
    delivery: Delivery,
    queue: OriginQueue,
    done: (outcome: WebhookAttempt["outcome"], retryAfterMs: number | undefined) => void
  ): void {
    const id = delivery.eventId
    const timestamp = String(Math.floor(this.#options.now() / 1000))
    const key = Buffer.from(this.secretFor(delivery.credential).slice("whsec_".length), "base64")
    const signature = createHmac("sha256", key)
      .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), delivery.body]))
      .digest("base64")
    const url = new URL(delivery.url)
    const startedAt = Date.now()
    let finished = false
    const finish = (outcome: WebhookAttempt["outcome"], retryAfterMs?: number) => {
      if (finished) return
      finished = true
      const attempt: WebhookAttempt = { eventId: id, url: delivery.url, startedAt, outcome }
      this.attempts.push(attempt)
      done(outcome, retryAfterMs)
      this.#onAttempt?.(attempt)
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const req = send(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": String(delivery.body.length),
          "user-agent": "download-service-webhooks/1.0",
          "webhook-id": id,
          "webhook-timestamp": timestamp,
          "webhook-signature": `v1,${signature}`
        },
        timeout: this.#options.requestTimeoutMs
      },
      (res: IncomingMessage) => {
        res.resume()
        res.on("end", () => finish(res.statusCode ?? 0, this.#retryAfter(res.headers["retry-after"])))
        res.on("error", () => finish("connection_error"))
      }
    )
    req.on("timeout", () => {
      req.destroy()
      finish("timeout")
    })
    req.on("error", () => finish("connection_error"))
    queue.inFlight = req
    req.end(delivery.body)
  }

  #retryAfter(header: string | undefined): number | undefined {
    if (header === undefined) return undefined
    if (/^\d+$/.test(header.trim())) return Number(header.trim()) * this.#options.retryAfterUnitMs
    const date = Date.parse(header)
    return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
  }
}

/**
 * Why a receiver URL is refused: it must be https on a public host name or address; with
 * `allowLoopbackHttp`, http or https to 127.0.0.0/8, ::1 or localhost is accepted too.
 */
export const webhookUrlProblem = (text: string, allowLoopbackHttp: boolean): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "webhook_url must be an absolute URL"
  }
  if (url.username !== "" || url.password !== "") return "webhook_url must not carry credentials"
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
  if (allowLoopbackHttp && isLoopback(host) && (url.protocol === "http:" || url.protocol === "https:")) return undefined
  if (url.protocol !== "https:") return "webhook_url must use https"
  if (!isPublicHost(host)) return "webhook_url must point at a public host"
  return undefined
}

interface Delivery {
  readonly eventId: string
  readonly url: string
  readonly credential: string
  readonly body: Buffer
  /** Wall-clock ms before which this event alone waits (after a non-retryable status). */
  notBefore: number
  failures: number
}

interface OriginQueue {
  readonly deliveries: Array<Delivery>
  inFlight: ReturnType<typeof httpRequest> | undefined
  nextAllowedAt: number
  pausedUntil: number
  backoffLevel: number
  timer: ReturnType<typeof setTimeout> | undefined
}

const newQueue = (): OriginQueue => ({
  deliveries: [],
  inFlight: undefined,
  nextAllowedAt: 0,
  pausedUntil: 0,
  backoffLevel: 0,
  timer: undefined
})

const SHARED_BACKOFF_STATUSES: ReadonlySet<number> = new Set([408, 425, 429])

const isLoopback = (host: string): boolean =>
  host === "localhost" || host.endsWith(".localhost") || host === "::1" || (isIP(host) === 4 && host.startsWith("127."))
