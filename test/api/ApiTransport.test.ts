/**
 * The API client's wire on its own, against real HTTP and https servers on 127.0.0.1 (the
 * committed test certificate, trusted as NODE_EXTRA_CA_CERTS would): what it collects, how
 * far an exchange got when it fails, and that interruption and the deadline really end the
 * request on the socket.
 */
import * as DiagnosticsChannel from "node:diagnostics_channel"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { ApiTransport, type WireRequest } from "../../src/api/ApiTransport.ts"
import { errorCodes, provablyNeverSent } from "../../src/api/neverSent.ts"
import { localhostTls, otherHostTls, SCHEMES, type Scheme, trustTestCertificates } from "../transfer/support/testTls.ts"

trustTestCertificates()

/** A server on a free loopback port, closed with the test's scope; https with `identity`. */
const serveOver = (scheme: Scheme, handler: Http.RequestListener, identity = localhostTls) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ server: Http.Server; url: URL }>((resolve) => {
          const server =
            scheme === "https"
              ? Https.createServer({ key: identity.key, cert: identity.cert }, handler)
              : Http.createServer(handler)
          server.listen(0, "127.0.0.1", () => {
            const address = server.address() as Net.AddressInfo
            resolve({ server, url: new URL(`${scheme}://127.0.0.1:${address.port}/api/thing?x=1`) })
          })
        })
    ),
    ({ server }) =>
      Effect.promise(() => {
        server.closeAllConnections()
        return new Promise<void>((resolve) => server.close(() => resolve()))
      })
  )

/** The client's sockets of the exchanges made meanwhile, as Node's http client announces them. */
const clientSockets = Effect.acquireRelease(
  Effect.sync(() => {
    const sockets = new Set<Net.Socket>()
    const onStart = (message: unknown) => {
      const { request } = message as { readonly request: Http.ClientRequest }
      if (request.socket !== null) sockets.add(request.socket)
      else request.once("socket", (socket) => sockets.add(socket))
    }
    DiagnosticsChannel.subscribe("http.client.request.start", onStart)
    return { sockets, onStart }
  }),
  ({ onStart }) => Effect.sync(() => DiagnosticsChannel.unsubscribe("http.client.request.start", onStart))
)

/** Event-loop turns until `done`: the client has handled what its peer did (a close, say). */
const untilClientSees = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let turn = 0; !done(); turn++) {
      if (turn > 1_000) return yield* Effect.die(new Error("the client never saw it"))
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
  })

const request = (url: URL, overrides: Partial<WireRequest> = {}): WireRequest => ({
  method: "GET",
  url,
  headers: { accept: "application/json" },
  body: undefined,
  timeoutMs: 5_000,
  maxBytes: 1024 * 1024,
  ...overrides
})

const exchange = (r: WireRequest) =>
  Effect.gen(function* () {
    const transport = yield* ApiTransport
    return yield* transport.exchange(r)
  })

/** One pool for the whole test, as in production: a connection closes only if the exchange ends it. */
const withPool = <A, E, R>(test: Effect.Effect<A, E, R>) => test.pipe(Effect.provide(ApiTransport.layerNodeHttp))

describe.each(SCHEMES)("ApiTransport over %s", (scheme) => {
  const serve = (handler: Http.RequestListener) => serveOver(scheme, handler)

  it.live(
    "sends method, path with query, headers and body; joins repeated headers; decodes UTF-8 split across chunks",
    () =>
      withPool(
        Effect.gen(function* () {
          const seen: Array<{
            method: string | undefined
            url: string | undefined
            type: string | undefined
            body: string
          }> = []
          const { url } = yield* serve((req, res) => {
            let body = ""
            req.setEncoding("utf8")
            req.on("data", (c) => (body += c))
            req.on("end", () => {
              seen.push({ method: req.method, url: req.url, type: req.headers["content-type"], body })
              res.setHeader("X-Multi", ["a", "b"])
              const text = Buffer.from('{"name":"café"}')
              const cut = text.indexOf(0xc3) + 1 // inside the two bytes of "é"
              res.write(text.subarray(0, cut))
              setTimeout(() => res.end(text.subarray(cut)), 20)
            })
          })
          const answer = yield* exchange(
            request(url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' })
          )
          assert.strictEqual(answer.status, 200)
          assert.strictEqual(answer.headers["x-multi"], "a, b")
          assert.strictEqual(answer.text, '{"name":"café"}')
          assert.deepStrictEqual(seen, [
            { method: "POST", url: "/api/thing?x=1", type: "application/json", body: '{"a":1}' }
          ])
        })
      )
  )

  it.live("keeps one connection between exchanges, and opens another once the server closed it", () =>
    withPool(
      Effect.gen(function* () {
        const { server, url } = yield* serve((_req, res) => res.end("ok"))
        const { sockets } = yield* clientSockets
        let connections = 0
        server.on(scheme === "https" ? "secureConnection" : "connection", () => connections++)
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* exchange(request(url))).text, "ok")
        assert.strictEqual(connections, 1)
        // The server ends the idle connection; the next exchange must not be sent on it.
        server.closeIdleConnections()
        yield* untilClientSees(() => [...sockets].every((socket) => socket.destroyed))
        assert.strictEqual((yield* exchange(request(url))).text, "ok")
        assert.strictEqual(connections, 2)
      })
    )
  )

  it.live("a refused connection fails at the connect stage, provably never sent", () =>
    withPool(
      Effect.gen(function* () {
        const { server, url } = yield* serve(() => undefined)
        yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
        const failure = yield* Effect.flip(exchange(request(url)))
        assert.strictEqual(failure.stage, "connect")
        assert.isTrue(provablyNeverSent(failure.cause))
      })
    )
  )

  it.live("an answer that breaks off inside its body fails at the body stage, with its status", () =>
    withPool(
      Effect.gen(function* () {
        const { url } = yield* serve((_req, res) => {
          res.writeHead(200, { "content-length": "1000" })
          res.write("x".repeat(10), () => res.socket?.destroy())
        })
        const failure = yield* Effect.flip(exchange(request(url)))
        assert.strictEqual(failure.stage, "body")
        assert.strictEqual(failure.status, 200)
        assert.isFalse(provablyNeverSent(failure.cause))
      })
    )
  )

  it.live("a body over the cap fails as too-large, whether declared or streamed", () =>
    withPool(
      Effect.gen(function* () {
        for (const declared of [true, false]) {
          const { url } = yield* serve((_req, res) => {
            if (declared) res.setHeader("content-length", "2048")
            res.end("y".repeat(2048))
          })
          const failure = yield* Effect.flip(exchange(request(url, { maxBytes: 1024 })))
          assert.strictEqual(failure.stage, "too-large")
          assert.strictEqual(failure.status, 200)
        }
      })
    )
  )

  it.live("the deadline ends a stalled body and closes the connection", () =>
    withPool(
      Effect.gen(function* () {
        const closed = yield* Deferred.make<void>()
        const { url } = yield* serve((req, res) => {
          req.socket.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
          res.writeHead(200, { "content-length": "100" })
          res.write("z")
        })
        const failure = yield* Effect.flip(exchange(request(url, { timeoutMs: 300 })))
        assert.strictEqual(failure.stage, "timeout")
        yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
      })
    )
  )

  it.live("interruption aborts the request: the server sees its connection close", () =>
    withPool(
      Effect.gen(function* () {
        const received = yield* Deferred.make<void>()
        const closed = yield* Deferred.make<void>()
        const { url } = yield* serve((req) => {
          req.socket.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
          Deferred.doneUnsafe(received, Effect.void)
        })
        const fiber = yield* Effect.forkChild(exchange(request(url)))
        yield* Deferred.await(received)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
      })
    )
  )
})

describe("ApiTransport's pool", () => {
  it.live("waits out an answer slower than the idle limit, then closes the idle connection itself after 4 s", () =>
    withPool(
      Effect.gen(function* () {
        const closed = yield* Deferred.make<number>()
        const { url } = yield* serveOver("http", (req, res) => {
          setTimeout(() => {
            const answered = Date.now()
            req.socket.once("close", () => Deferred.doneUnsafe(closed, Effect.succeed(Date.now() - answered)))
            res.end("ok")
          }, 4_500)
        })
        // A request in progress is not idle: only its deadline bounds it.
        assert.strictEqual((yield* exchange(request(url, { timeoutMs: 10_000 }))).text, "ok")
        // Node's server would keep it 5 s (its keepAliveTimeout): the client closed it.
        const idleMs = yield* Deferred.await(closed).pipe(Effect.timeout("4900 millis"))
        assert.isAtLeast(idleMs, 3_900)
      })
    )
  )
})

describe("ApiTransport over https, a certificate made out to another host", () => {
  it.live("fails at the connect stage with OpenSSL's verdict as the cause, not provably never sent", () =>
    withPool(
      Effect.gen(function* () {
        let asked = 0
        const { url } = yield* serveOver("https", () => asked++, otherHostTls)
        const failure = yield* Effect.flip(exchange(request(url)))
        assert.strictEqual(failure.stage, "connect")
        assert.include(errorCodes(failure.cause), "ERR_TLS_CERT_ALTNAME_INVALID")
        assert.isFalse(provablyNeverSent(failure.cause))
        assert.strictEqual(asked, 0, "no request got through the handshake")
      })
    )
  )
})
