import * as Net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted, References } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiEndpoints } from "../../src/api/ApiEndpoints.ts"
import { ApiHttp, ApiObserver, REQUEST_ID_PATTERN } from "../../src/api/ApiHttp.ts"
import { ApiTransport } from "../../src/api/ApiTransport.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { account, downloadId as did, fileId as fid, fileRecord, selectionId } from "./fixtures.ts"
import {
  API_KEY,
  FAST_SETTINGS,
  fastSettings,
  type Recorded,
  type Reply,
  startServer,
  withClient
} from "./testServer.ts"

describe("ApiHttp: headers", () => {
  it.live("sends Accept, the bearer and a generated X-Request-ID under base_url, and keeps the answer's id", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ body: { data: account } }))
      yield* withClient(server, (c) => c.account.get)
      const req = server.requests[0]!
      assert.strictEqual(req.path, "/api/v1/account")
      assert.strictEqual(req.headers.accept, "application/json")
      assert.strictEqual(req.headers.authorization, `Bearer ${API_KEY}`)
      const id = String(req.headers["x-request-id"])
      assert.match(id, REQUEST_ID_PATTERN)
    })
  )

  it.live("sends the same X-Request-ID on every attempt of one call, a new one per call", () =>
    Effect.gen(function* () {
      let n = 0
      const server = yield* startServer(() => (++n === 1 ? { status: 503 } : { body: { data: account } }))
      yield* withClient(server, (c) => Effect.andThen(c.account.get, c.account.get))
      const ids = server.requests.map((r) => r.headers["x-request-id"])
      assert.strictEqual(ids.length, 3)
      assert.strictEqual(ids[0], ids[1])
      assert.notStrictEqual(ids[1], ids[2])
    })
  )

  it.live("sends a caller's valid X-Request-ID unchanged and refuses an invalid one without sending", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ body: { data: [], meta: { next_cursor: null, has_more: false } } }))
      yield* withClient(server, (c) => c.files.list({ requestId: "my-trace-1" }))
      assert.strictEqual(server.requests[0]?.headers["x-request-id"], "my-trace-1")
      for (const bad of ["", "x".repeat(101), "has space", "new\nline"]) {
        const error = yield* withClient(server, (c) => Effect.flip(c.files.list({ requestId: bad })))
        assert.strictEqual(error.reason._tag, "ClientValidation")
        assert.include(error.message, "X-Request-ID")
      }
      yield* withClient(server, (c) => c.files.list({ requestId: "x".repeat(100) }))
      assert.strictEqual(server.requests.length, 2)
    })
  )

  it.live("keeps the response's X-Request-ID on errors", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({
        status: 404,
        headers: { "x-request-id": "srv-trace-77" },
        body: { error: { code: "not_found", message: "no such file" } }
      }))
      const error = yield* withClient(server, (c) => Effect.flip(c.files.get(fid("f_404"))))
      assert.strictEqual(error.reason._tag, "NotFound")
      assert.strictEqual(error.reason._tag === "NotFound" ? error.reason.requestId : "", "srv-trace-77")
      assert.include(error.message, "srv-trace-77")
      assert.include(error.message, "GET /files/{file}")
    })
  )
})

describe("ApiHttp: the bearer stays on the API's origins", () => {
  it.live("a redirect to another origin (another port) never receives Authorization", () =>
    Effect.gen(function* () {
      const other = yield* startServer(() => ({ body: { data: account } }))
      const api = yield* startServer((r) =>
        r.path === "/api/v1/account"
          ? { status: 302, headers: { location: `${other.origin}/elsewhere/account?sig=abc` } }
          : { status: 404 }
      )
      yield* withClient(api, (c) => c.account.get)
      assert.strictEqual(other.requests.length, 1)
      assert.isUndefined(other.requests[0]?.headers.authorization)
      assert.strictEqual(other.requests[0]?.url, "/elsewhere/account?sig=abc")
      assert.strictEqual(api.requests[0]?.headers.authorization, `Bearer ${API_KEY}`)
    })
  )

  it.live("a same-origin redirect keeps the bearer; a chain back through another origin gets it only on ours", () =>
    Effect.gen(function* () {
      let apiOrigin = ""
      const other = yield* startServer(() => ({
        status: 307,
        headers: { location: `${apiOrigin}/api/v1/account-final` }
      }))
      const api = yield* startServer((r) => {
        if (r.path === "/api/v1/account") return { status: 301, headers: { location: "/api/v1/account-moved" } }
        if (r.path === "/api/v1/account-moved") return { status: 302, headers: { location: `${other.origin}/bounce` } }
        return { body: { data: account } }
      })
      apiOrigin = api.origin
      yield* withClient(api, (c) => c.account.get)
      assert.deepStrictEqual(
        api.requests.map((r) => [r.path, r.headers.authorization]),
        [
          ["/api/v1/account", `Bearer ${API_KEY}`],
          ["/api/v1/account-moved", `Bearer ${API_KEY}`],
          ["/api/v1/account-final", `Bearer ${API_KEY}`]
        ]
      )
      assert.isUndefined(other.requests[0]?.headers.authorization)
    })
  )

  it.live("the auth_url origin is trusted too, but OAuth endpoints themselves get no bearer", () =>
    Effect.gen(function* () {
      const auth = yield* startServer(() => ({
        body: { token_type: "Bearer", expires_in: 3600, access_token: "at", refresh_token: "rt2" }
      }))
      const api = yield* startServer(() => ({ body: {} }))
      const token = yield* withClient(
        api,
        (c) =>
          c.oauth.token({
            grantType: "refresh_token",
            refreshToken: Redacted.make("rt1"),
            clientId: "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
          }),
        { authOrigin: auth.origin }
      )
      assert.strictEqual(token.refresh_token, "rt2")
      const req = auth.requests[0]!
      assert.strictEqual(req.path, "/oauth/token")
      assert.isUndefined(req.headers.authorization)
      assert.strictEqual(req.headers["content-type"], "application/x-www-form-urlencoded")
      const form = new URLSearchParams(req.body.toString())
      assert.strictEqual(form.get("grant_type"), "refresh_token")
      assert.strictEqual(form.get("refresh_token"), "rt1")
    })
  )

  it.live("a redirect of a POST is not followed, and its target receives nothing", () =>
    Effect.gen(function* () {
      const other = yield* startServer(() => ({ body: {} }))
      const api = yield* startServer(() => ({ status: 307, headers: { location: `${other.origin}/steal` } }))
      const error = yield* withClient(api, (c) => Effect.flip(c.files.downloadLink(fid("f_1"))))
      assert.strictEqual(error.reason._tag, "Unexpected")
      assert.include(error.message, "not followed")
      assert.notInclude(error.message, "?")
      assert.strictEqual(other.requests.length, 0)
    })
  )

  it.live("stops after a bounded number of redirects", () =>
    Effect.gen(function* () {
      const api = yield* startServer((r) => ({ status: 302, headers: { location: `${r.path}x` } }))
      const error = yield* withClient(api, (c) => Effect.flip(c.account.get))
      assert.strictEqual(error.reason._tag, "Unexpected")
      assert.strictEqual(api.requests.length, 6)
    })
  )
})

describe("ApiHttp: 401 and credential refresh", () => {
  const rotating = (log: Array<string>) =>
    Layer.effect(
      Credentials,
      Effect.sync(() => {
        let current = "token-1"
        return Credentials.of({
          bearer: Effect.sync(() => Redacted.make(current)),
          refreshAfterUnauthorized: (used) =>
            Effect.sync(() => {
              log.push(Redacted.value(used))
              current = "token-2"
              return true
            })
        })
      })
    )

  it.live("asks for a fresh credential after a 401 and sends the request once more with it", () =>
    Effect.gen(function* () {
      const refreshed: Array<string> = []
      const server = yield* startServer((r) =>
        r.headers.authorization === "Bearer token-2" ? { body: { data: account } } : { status: 401 }
      )
      const a = yield* withClient(server, (c) => c.account.get, { credentials: rotating(refreshed) })
      assert.strictEqual(a.id, "u_42")
      assert.deepStrictEqual(refreshed, ["token-1"])
      assert.deepStrictEqual(
        server.requests.map((r) => r.headers.authorization),
        ["Bearer token-1", "Bearer token-2"]
      )
    })
  )

  it.live("retries only once: a second 401 fails as Unauthorized", () =>
    Effect.gen(function* () {
      const refreshed: Array<string> = []
      const server = yield* startServer(() => ({
        status: 401,
        headers: { "www-authenticate": 'Bearer error="invalid_token"' },
        body: { error: { code: "unauthenticated", message: "bad token" } }
      }))
      const error = yield* withClient(server, (c) => Effect.flip(c.account.get), { credentials: rotating(refreshed) })
      assert.strictEqual(error.reason._tag, "Unauthorized")
      assert.strictEqual(server.requests.length, 2)
      assert.strictEqual(refreshed.length, 1)
    })
  )

  it.live("an API key cannot refresh: one request, then Unauthorized", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ status: 401 }))
      const error = yield* withClient(server, (c) => Effect.flip(c.account.get))
      assert.strictEqual(error.reason._tag, "Unauthorized")
      assert.strictEqual(server.requests.length, 1)
    })
  )
})

describe("ApiHttp: retries", () => {
  it.live("retries a GET through 503, 429 (Retry-After: 0), 408 and a dropped connection", () =>
    Effect.gen(function* () {
      const script: Array<(r: Recorded) => Reply | "destroy"> = [
        () => ({ status: 503 }),
        () => ({ status: 429, headers: { "retry-after": "0" } }),
        () => "destroy",
        () => ({ body: { data: account } })
      ]
      let n = 0
      const server = yield* startServer((r) => script[Math.min(n++, 3)]!(r))
      const a = yield* withClient(server, (c) => c.account.get)
      assert.strictEqual(a.id, "u_42")
      assert.strictEqual(server.requests.length, 4)
    })
  )

  it.live("gives up after the schedule's attempts with the last failure", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ status: 500, body: { error: { code: "boom", message: "broken" } } }))
      const error = yield* withClient(server, (c) => Effect.flip(c.account.get))
      assert.strictEqual(error.reason._tag, "Server")
      assert.strictEqual(server.requests.length, 4)
    })
  )

  it.live("hands a long Retry-After to the caller instead of waiting", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ status: 429, headers: { "retry-after": "3600" } }))
      const error = yield* withClient(server, (c) => Effect.flip(c.account.get))
      assert.strictEqual(error.reason._tag === "RateLimited" ? error.reason.retryAfterMillis : 0, 3_600_000)
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.live("never resends a download creation that reached the server (5xx, 429, reset)", () =>
    Effect.gen(function* () {
      for (const reply of [{ status: 502 }, { status: 429, headers: { "retry-after": "0" } }, "destroy"] as const) {
        const server = yield* startServer(() => reply)
        const error = yield* withClient(server, (c) =>
          Effect.flip(c.downloads.create({ magnet: "magnet:?xt=urn:btih:abc" }))
        )
        assert.include(["Server", "RateLimited", "Transport"], error.reason._tag)
        assert.strictEqual(server.requests.length, 1, JSON.stringify(reply))
      }
    })
  )

  it.live("never resends cancel, retry, choices, folder creation, upload or a token request", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ status: 503 }))
      const tags = yield* withClient(server, (c) =>
        Effect.forEach(
          [
            c.downloads.cancel(did("dl_1")).pipe(Effect.asVoid),
            c.downloads.retry(did("dl_1")).pipe(Effect.asVoid),
            c.selections.choose(selectionId("sel_1"), "e1").pipe(Effect.asVoid),
            c.files.createFolder({ name: "New" }).pipe(Effect.asVoid),
            c.downloads.upload({ fileName: "a.torrent", content: new Uint8Array([1, 2, 3]) }).pipe(Effect.asVoid),
            c.oauth.authorizeDevice("1b4e28ba-2fa1-11d2-883f-0016d3cca427").pipe(Effect.asVoid)
          ],
          (e) => Effect.map(Effect.flip(e), (error) => error.reason._tag)
        )
      )
      assert.deepStrictEqual(tags, ["Server", "Server", "Server", "Server", "Server", "Server"])
      assert.strictEqual(server.requests.length, 6)
    })
  )

  it.live("retries idempotent POSTs (download link) on 503", () =>
    Effect.gen(function* () {
      let n = 0
      const server = yield* startServer(() =>
        ++n < 2 ? { status: 503 } : { body: { data: { url: "https://cdn.example/f?sig=1", expires_at: null } } }
      )
      const link = yield* withClient(server, (c) => c.files.downloadLink(fid("f_1")))
      assert.strictEqual(link.url, "https://cdn.example/f?sig=1")
      assert.strictEqual(server.requests.length, 2)
    })
  )

  it.live("resends an unsafe POST when the connection was refused (nothing reached a server)", () =>
    Effect.gen(function* () {
      const port = yield* freePort
      let attempts = 0
      const counting = Layer.effect(
        ApiTransport,
        Effect.gen(function* () {
          const transport = yield* ApiTransport
          return ApiTransport.of({
            exchange: (request) =>
              Effect.suspend(() => {
                attempts++
                return transport.exchange(request)
              })
          })
        })
      ).pipe(Layer.provide(ApiTransport.layerNodeHttp))
      const layer = ApiClient.layer.pipe(
        Layer.provide(ApiHttp.layer),
        Layer.provide(ApiObserver.none),
        Layer.provide(counting),
        Layer.provide(
          ApiEndpoints.layer({ baseUrl: `http://127.0.0.1:${port}/api/v1`, authUrl: `http://127.0.0.1:${port}` })
        ),
        Layer.provide(Credentials.apiKey(Redacted.make(API_KEY))),
        Layer.provideMerge(fastSettings),
        Layer.orDie
      )
      const error = yield* Effect.gen(function* () {
        const c = yield* ApiClient
        return yield* Effect.flip(c.downloads.create({ url: "https://files.example/a.iso" }))
      }).pipe(Effect.provide(layer, { local: true }))
      assert.strictEqual(error.reason._tag, "Transport")
      assert.isTrue(error.reason._tag === "Transport" && error.reason.neverSent)
      assert.strictEqual(attempts, 4)
    })
  )

  it.live("a request with no answer in time fails as a Transport timeout", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => new Promise(() => {}))
      const error = yield* withClient(server, (c) => Effect.flip(c.downloads.create({ url: "https://x.example/a" })), {
        settings: { ...FAST_SETTINGS, timeoutMs: 200 }
      })
      assert.isTrue(error.reason._tag === "Transport" && error.reason.timedOut)
      assert.strictEqual(server.requests.length, 1)
    })
  )
})

describe("ApiHttp: responses that break the spec", () => {
  it.live("a documented field of the wrong type is a Protocol error naming the field and the request id", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({
        headers: { "x-request-id": "srv-bad-1" },
        body: { data: fileRecord({ locked: "nope" }) }
      }))
      const error = yield* withClient(server, (c) => Effect.flip(c.files.get(fid("f_1"))))
      assert.strictEqual(error.reason._tag, "Protocol")
      assert.strictEqual(error.reason._tag === "Protocol" ? error.reason.field : "", "data.locked")
      assert.include(error.message, "srv-bad-1")
    })
  )

  it.live("a body over the size cap is a Protocol error, declared or streamed", () =>
    Effect.gen(function* () {
      const huge = JSON.stringify({ data: "x".repeat(FAST_SETTINGS.maxResponseBytes) })
      for (const headers of [{}, { "transfer-encoding": "chunked" }]) {
        const server = yield* startServer(() => ({ headers, body: huge }))
        const error = yield* withClient(server, (c) => Effect.flip(c.account.get))
        assert.strictEqual(error.reason._tag, "Protocol")
        assert.include(error.message, "exceeds")
        assert.strictEqual(server.requests.length, 1)
      }
    })
  )

  it.live("a 200 that is not JSON is a Protocol error, not a crash", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => ({ body: "<html>captive portal</html>" }))
      const error = yield* withClient(server, (c) => Effect.flip(c.account.get))
      assert.strictEqual(error.reason._tag, "Protocol")
    })
  )
})

describe("ApiHttp: logs", () => {
  it.live("debug logs name method, path, status and request id, never the bearer or a query", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const collect = Logger.make((options) => {
        lines.push(Logger.formatLogFmt.log(options))
      })
      const server = yield* startServer(() => ({
        body: { data: { url: "https://cdn.example/f?sig=SECRET", expires_at: null } }
      }))
      yield* withClient(server, (c) => c.files.downloadLink(fid("f_1"))).pipe(
        Effect.provide(Logger.layer([collect])),
        Effect.provideService(References.MinimumLogLevel, "Debug")
      )
      const all = lines.join("\n")
      assert.include(all, "POST")
      assert.include(all, "/api/v1/files/f_1/download-link")
      assert.include(all, "200")
      assert.include(all, "srv-1")
      assert.notInclude(all, API_KEY)
      assert.notInclude(all, "SECRET")
    })
  )
})

/** A port with nothing listening: bound, then closed. */
const freePort = Effect.callback<number>((resume) => {
  const s = Net.createServer()
  s.listen(0, "127.0.0.1", () => {
    const address = s.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    s.close(() => resume(Effect.succeed(port)))
  })
})
