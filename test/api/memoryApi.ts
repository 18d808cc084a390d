/**
 * The service's API in memory, for tests on TestClock: answers come from a function and
 * each exchange is recorded with the time (Effect clock) it went out, so "no request
 * inside a Retry-After window" is exact. `clientOver` is the real ApiClient over it.
 */
import { Clock, Effect, Layer, Redacted } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiEndpoints } from "../../src/api/ApiEndpoints.ts"
import { ApiHttp, ApiObserver, type ApiObserverShape } from "../../src/api/ApiHttp.ts"
import { ApiTransport, type WireAnswer } from "../../src/api/ApiTransport.ts"
import { Credentials } from "../../src/api/Credentials.ts"

export interface Sent {
  readonly at: number
  readonly method: string
  readonly path: string
  readonly status: number
}

/** Answers from `reply` (method, path, how many requests came before) and records each exchange. */
export const memoryWire = (reply: (method: string, path: string, n: number) => WireAnswer) => {
  const sent: Array<Sent> = []
  const layer = Layer.succeed(
    ApiTransport,
    ApiTransport.of({
      exchange: (request) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          const answer = reply(request.method, request.url.pathname, sent.length)
          sent.push({ at, method: request.method, path: request.url.pathname, status: answer.status })
          return answer
        })
    })
  )
  return { sent, layer }
}

export const ok = (data: unknown): WireAnswer => ({
  status: 200,
  headers: { "content-type": "application/json" },
  text: JSON.stringify({ data })
})

export const tooMany = (retryAfterSeconds: number): WireAnswer => ({
  status: 429,
  headers: { "retry-after": String(retryAfterSeconds), "content-type": "application/json" },
  text: JSON.stringify({ error: { code: "rate_limited", message: "slow down" } })
})

const quiet: ApiObserverShape = {
  request: () => Effect.void,
  retry: () => Effect.void,
  rateLimitWait: () => Effect.void
}

/** The real ApiClient (rate gate included) over `wire`, with an API key. */
export const clientOver = (wire: Layer.Layer<ApiTransport>, observer: ApiObserverShape = quiet) =>
  ApiClient.layer.pipe(
    Layer.provide(ApiHttp.layer),
    Layer.provide(wire),
    Layer.provide(ApiEndpoints.layer({ baseUrl: "https://api.example/api/v1", authUrl: "https://api.example" })),
    Layer.provide(Credentials.apiKey(Redacted.make("dls_test_key_0123456789"))),
    Layer.provide(Layer.succeed(ApiObserver, observer))
  )
