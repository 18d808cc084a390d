/**
 * The API client's wire: one HTTP exchange — the request out, the whole body in (capped),
 * within a deadline — on undici's dispatcher/handler API over a keep-alive pool. Nothing
 * else: headers, credentials, redirects, retries and the meaning of a status are ApiHttp's.
 *
 * Why not Effect's HttpClient: it wraps every exchange in request/response objects, a body
 * stream and an AbortController whose abort builds a DOMException with a stack, which cost
 * ≈ 0.6 ms of CPU per request: 2,000 link requests took 1.2–1.6 CPU s through it against
 * 0.3 s through undici alone (bench/run.ts asks one link per file, so small files paid it
 * on every file). A handler that collects Buffers does the same work for the cost of undici.
 *
 * Every failure says how far the exchange got, which is what retry safety needs:
 * `connect` (no answer; `cause` tells whether the request was provably never sent),
 * `body` (answered, the body broke off), `timeout`, `too-large`.
 */
import { Context, Effect, Layer } from "effect"
import type { Dispatcher } from "undici"
import { Agent } from "./undiciAgent.ts"

export interface WireRequest {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly url: URL
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | Uint8Array | undefined
  /** The whole exchange (connect, headers and body) must end within this. */
  readonly timeoutMs: number
  /** A body longer than this (declared or received) fails as `too-large`. */
  readonly maxBytes: number
}

export interface WireAnswer {
  readonly status: number
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  /** The body as UTF-8 ("" when there is none). */
  readonly text: string
}

export interface WireFailure {
  readonly _tag: "WireFailure"
  readonly stage: "invalid" | "connect" | "body" | "timeout" | "too-large"
  /** The answer's status, once there was one. */
  readonly status: number | undefined
  /** The answer's headers, once there were some. */
  readonly headers: Readonly<Record<string, string>>
  readonly cause: unknown
}

export class ApiTransport extends Context.Service<
  ApiTransport,
  { readonly exchange: (request: WireRequest) => Effect.Effect<WireAnswer, WireFailure> }
>()("dlsync/api/ApiTransport") {
  /** undici, one keep-alive pool per origin, closed with the layer. */
  static readonly layerUndici = Layer.effect(
    ApiTransport,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => new Agent()),
        (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
      ),
      (agent) => ApiTransport.of({ exchange: (request) => exchange(agent, request) })
    )
  )
}

// ---------------------------------------------------------------------------------------

/** Interruption aborts the request; a late answer after that is dropped. */
const exchange = (dispatcher: Dispatcher, request: WireRequest): Effect.Effect<WireAnswer, WireFailure> =>
  Effect.callback<WireAnswer, WireFailure>((resume) => {
    const handler = new CollectingHandler(request.maxBytes, (outcome) =>
      resume("stage" in outcome ? Effect.fail(outcome) : Effect.succeed(outcome))
    )
    handler.startDeadline(request.timeoutMs)
    try {
      dispatcher.dispatch(
        {
          origin: request.url.origin,
          path: request.url.pathname + request.url.search,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
          // The deadline above bounds the whole exchange.
          headersTimeout: 0,
          bodyTimeout: 0
        },
        handler
      )
    } catch (error) {
      handler.fail("invalid", error)
    }
    return Effect.sync(() => handler.abort())
  })

/** The reason given to undici when we end an exchange ourselves. */
const STOP = new Error("dlsync: exchange abandoned")

class CollectingHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null
  private settled = false
  private timer: NodeJS.Timeout | undefined
  private status: number | undefined
  private headers: Record<string, string> = {}
  private readonly chunks: Array<Buffer> = []
  private size = 0
  private readonly maxBytes: number
  private readonly settle: (outcome: WireAnswer | WireFailure) => void

  constructor(maxBytes: number, settle: (outcome: WireAnswer | WireFailure) => void) {
    this.maxBytes = maxBytes
    this.settle = settle
  }

  startDeadline(timeoutMs: number): void {
    this.timer = setTimeout(() => {
      this.fail("timeout", new Error(`no complete answer within ${timeoutMs} ms`))
      this.abort()
    }, timeoutMs)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.settled) controller.abort(STOP)
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | Array<string> | undefined>
  ): void {
    this.controller = controller
    this.status = status
    this.headers = flatten(headers)
    if (Number(this.headers["content-length"] ?? "0") > this.maxBytes) this.tooLarge()
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return
    this.size += chunk.length
    if (this.size > this.maxBytes) this.tooLarge()
    else this.chunks.push(chunk)
  }

  onResponseEnd(): void {
    if (this.settled) return
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
    this.finish({ status: this.status ?? 0, headers: this.headers, text: body?.toString("utf8") ?? "" })
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(this.status === undefined ? "connect" : "body", error)
  }

  fail(stage: WireFailure["stage"], cause: unknown): void {
    this.finish({ _tag: "WireFailure", stage, status: this.status, headers: this.headers, cause })
  }

  /** Ends the exchange on our side (interruption, deadline, cap); harmless once it ended. */
  abort(): void {
    this.settled = true
    clearTimeout(this.timer)
    this.controller?.abort(STOP)
  }

  private tooLarge(): void {
    this.fail("too-large", new Error(`response body exceeds ${this.maxBytes} bytes`))
    this.controller?.abort(STOP)
  }

  private finish(outcome: WireAnswer | WireFailure): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.settle(outcome)
  }
}

const flatten = (headers: Record<string, string | Array<string> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}
