/**
 * A scripted HTTP server on 127.0.0.1 (port 0) for API client tests: every request is
 * recorded (method, path with query, headers, body) and answered by the test's handler.
 */
import * as Http from "node:http"
import { Effect, Layer, Redacted, type Scope } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiEndpoints } from "../../src/api/ApiEndpoints.ts"
import { ApiHttp, ApiHttpSettings, ApiObserver, type HttpSettings } from "../../src/api/ApiHttp.ts"
import { ApiTransport } from "../../src/api/ApiTransport.ts"
import { Credentials } from "../../src/api/Credentials.ts"

export interface Recorded {
  readonly method: string
  /** Path and query, e.g. `/api/v1/files?limit=2`. */
  readonly url: string
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
}

export interface Reply {
  readonly status?: number
  readonly headers?: Record<string, string>
  /** An object is sent as JSON; a string as is; undefined sends no body. */
  readonly body?: unknown
}

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly requests: Array<Recorded>
}

/** Starts a server answering with `handler` (a Reply, or "destroy" to drop the connection). */
export const startServer = (
  handler: (request: Recorded) => Reply | "destroy" | Promise<Reply | "destroy">
): Effect.Effect<TestServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; test: TestServer }>((resume) => {
      const requests: Array<Recorded> = []
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", async () => {
          const url = new URL(req.url ?? "/", "http://127.0.0.1")
          const recorded: Recorded = {
            method: req.method ?? "",
            url: req.url ?? "",
            path: url.pathname,
            query: url.searchParams,
            headers: req.headers,
            body: Buffer.concat(chunks)
          }
          requests.push(recorded)
          const reply = await handler(recorded)
          if (reply === "destroy") {
            req.socket.destroy()
            return
          }
          const status = reply.status ?? 200
          const headers: Record<string, string> = { "x-request-id": `srv-${requests.length}`, ...reply.headers }
          if (reply.body === undefined) {
            res.writeHead(status, headers).end()
          } else {
            const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)
            res.writeHead(status, { "content-type": "application/json", ...headers }).end(text)
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ server, test: { origin: `http://127.0.0.1:${port}`, requests } }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ test }) => test))

export const API_KEY = "dls_test_key_0123456789"

/** Fast retries for tests: 1 ms backoff ceilings, 4 attempts, short timeout. */
export const FAST_SETTINGS: HttpSettings = {
  schedule: { baseDelayMs: 1, maxDelayMs: 4, maxAttempts: 4, maxInlineWaitMs: 2_000 },
  timeoutMs: 2_000,
  maxResponseBytes: 1024 * 1024
}
export const fastSettings = Layer.succeed(ApiHttpSettings, FAST_SETTINGS)

/** An ApiClient (and ApiHttp) aimed at `origin`, with an API key unless other credentials are given. */
export const clientLayer = (
  origin: string,
  options: {
    readonly credentials?: Layer.Layer<Credentials>
    readonly authOrigin?: string
    readonly settings?: HttpSettings
    /** Sees each attempt and retry; ApiObserver.none when not given. */
    readonly observer?: Layer.Layer<ApiObserver>
  } = {}
) => {
  const http = ApiHttp.layer.pipe(
    Layer.provide(ApiTransport.layerNodeHttp),
    Layer.provide(ApiEndpoints.layer({ baseUrl: `${origin}/api/v1`, authUrl: options.authOrigin ?? origin })),
    Layer.provide(options.credentials ?? Credentials.apiKey(Redacted.make(API_KEY))),
    Layer.provide(options.observer ?? ApiObserver.none)
  )
  const settings = Layer.succeed(ApiHttpSettings, options.settings ?? FAST_SETTINGS)
  return Layer.mergeAll(ApiClient.layer.pipe(Layer.provideMerge(http)), settings).pipe(Layer.orDie)
}

/** Runs `f` with a fresh client aimed at `server`. */
export const withClient = <A, E>(
  server: TestServer,
  f: (client: ApiClient["Service"]) => Effect.Effect<A, E>,
  options?: Parameters<typeof clientLayer>[1]
): Effect.Effect<A, E> =>
  Effect.gen(function* () {
    return yield* f(yield* ApiClient)
  }).pipe(Effect.provide(clientLayer(server.origin, options), { local: true }))
