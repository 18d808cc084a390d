/**
 * The API client's wire: one HTTP exchange — the request out, the whole body in (capped),
 * within a deadline — on Node's own http and https clients over a keep-alive pool per
 * scheme. Nothing else: headers, credentials, redirects, retries and the meaning of a status
 * are ApiHttp's.
 *
 * Why not Effect's HttpClient: it wraps every exchange in request/response objects, a body
 * stream and an AbortController whose abort builds a DOMException with a stack, which cost
 * ≈ 0.6 ms of CPU per request: 2,000 link requests took 1.2–1.6 CPU s through it against
 * 0.3 s through a bare client (bench/run.ts asks one link per file, so small files paid it
 * on every file). Why not undici: its Agent loads node:http2 and compiles a WebAssembly HTTP
 * parser in every process, ≈ 0.08 CPU s of each `run --once` that Node's built-in parser
 * does not cost.
 *
 * Every failure says how far the exchange got, which is what retry safety needs:
 * `connect` (no answer; `cause` tells whether the request was provably never sent),
 * `body` (answered, the body broke off), `timeout`, `too-large`.
 */
import type * as Http from "node:http"
import { Context, Effect, Layer } from "effect"
import { nodeTimers, type Timer } from "../pacing/systemClock.ts"
import { NodeHttp } from "../server/nodeHttp.ts"

const NodeHttps = process.getBuiltinModule("node:https")

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
  /** Node's http and https clients, keep-alive pools closed with the layer. */
  static readonly layerNodeHttp = Layer.effect(
    ApiTransport,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => ({
          http: new NodeHttp.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
          https: new NodeHttps.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS })
        })),
        (agents) =>
          Effect.sync(() => {
            agents.http.destroy()
            agents.https.destroy()
          })
      ),
      (agents) => ApiTransport.of({ exchange: (request) => exchange(agents, request) })
    )
  )
}

// ---------------------------------------------------------------------------------------

/**
 * A kept-alive socket idle this long is closed by us (undici's default): Node's Agent
 * otherwise keeps it until the server says otherwise, and a server, proxy
 * or NAT that drops idle connections without a word would meet the next request, perhaps a
 * POST that may not be sent again. A request in progress is bounded by its own deadline.
 */
const IDLE_SOCKET_MS = 4_000

interface Agents {
  readonly http: Http.Agent
  readonly https: Http.Agent
}

/** Interruption aborts the request; a late answer after that is dropped. */
const exchange = (agents: Agents, request: WireRequest): Effect.Effect<WireAnswer, WireFailure> =>
  Effect.callback<WireAnswer, WireFailure>((resume) => {
    const collector = new Collector(request.maxBytes, (outcome) =>
      resume("stage" in outcome ? Effect.fail(outcome) : Effect.succeed(outcome))
    )
    collector.startDeadline(request.timeoutMs)
    try {
      const https = request.url.protocol === "https:"
      if (!https && request.url.protocol !== "http:") throw new Error(`unsupported protocol ${request.url.protocol}`)
      const client = https ? NodeHttps : NodeHttp
      const req = client.request(request.url, {
        method: request.method,
        headers: request.headers,
        agent: https ? agents.https : agents.http
      })
      collector.attach(req)
      req.end(request.body)
    } catch (error) {
      collector.fail("invalid", error)
    }
    return Effect.sync(() => collector.abort())
  })

/** Collects one answer; the first outcome (answer, failure, deadline, abort) wins. */
class Collector {
  private req: Http.ClientRequest | null = null
  private settled = false
  private timer: Timer | undefined
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
    this.timer = nodeTimers.after(timeoutMs, () => {
      this.fail("timeout", new Error(`no complete answer within ${timeoutMs} ms`))
      this.abort()
    })
  }

  attach(req: Http.ClientRequest): void {
    this.req = req
    // Before an answer: no status, "connect" (neverSent.ts reads the cause); after: "body".
    req.on("error", (error) => this.fail(this.status === undefined ? "connect" : "body", error))
    req.on("response", (res) => {
      this.status = res.statusCode ?? 0
      this.headers = flatten(res.headersDistinct)
      if (Number(this.headers["content-length"] ?? "0") > this.maxBytes) return this.tooLarge()
      res.on("data", (chunk: Buffer) => {
        if (this.settled) return
        this.size += chunk.length
        if (this.size > this.maxBytes) this.tooLarge()
        else this.chunks.push(chunk)
      })
      res.on("end", () => {
        // Node ends a body cut short by the peer as "aborted", then "end": not an answer.
        if (!res.complete) return this.fail("body", new Error("the connection closed inside the body"))
        const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
        const answer = { status: this.status ?? 0, headers: this.headers, text: body?.toString("utf8") ?? "" }
        // Node gives the socket back to its pool on the next tick, and the caller's next
        // request may be sent from inside this call: it would open another connection.
        this.timer?.cancel()
        setImmediate(() => this.finish(answer))
      })
      res.on("error", (error) => this.fail("body", error))
    })
  }

  fail(stage: WireFailure["stage"], cause: unknown): void {
    this.finish({ _tag: "WireFailure", stage, status: this.status, headers: this.headers, cause })
  }

  /** Ends the exchange on our side (interruption, deadline, cap); harmless once it ended. */
  abort(): void {
    this.settled = true
    this.timer?.cancel()
    if (this.req !== null && !this.req.destroyed) this.req.destroy()
  }

  private tooLarge(): void {
    this.fail("too-large", new Error(`response body exceeds ${this.maxBytes} bytes`))
    this.abort()
  }

  private finish(outcome: WireAnswer | WireFailure): void {
    if (this.settled) return
    this.settled = true
    this.timer?.cancel()
    this.settle(outcome)
  }
}

const flatten = (headers: Record<string, ReadonlyArray<string> | undefined>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = value.join(", ")
  }
  return out
}
