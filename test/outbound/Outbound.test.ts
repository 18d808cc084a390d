/**
 * The outbound client against real local servers: a body is capped while it streams in (a
 * server that never stops sending is cut off at the cap, the connection closed), a declared
 * length over the cap is refused before any of the body, redirects are followed only when
 * asked and only to http(s) (headers only to the same origin), and the deadline is the
 * Clock's.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Outbound, type OutboundRequest } from "../../src/outbound/Outbound.ts"

interface Server {
  readonly url: string
  /** Requests received: the path and the headers. */
  readonly seen: Array<{ readonly path: string; readonly headers: Http.IncomingHttpHeaders }>
  /** Connections the server saw closed before its answer ended. */
  readonly cutOff: () => number
}

/** A server on 127.0.0.1 for the scope's life, answering with `handle`. */
const server = (handle: (req: Http.IncomingMessage, res: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<Server & { readonly close: () => void }>((resolve) => {
          const seen: Array<{ path: string; headers: Http.IncomingHttpHeaders }> = []
          let cut = 0
          const s = Http.createServer((req, res) => {
            seen.push({ path: req.url ?? "", headers: req.headers })
            res.on("close", () => {
              if (!res.writableFinished) cut += 1
            })
            handle(req, res)
          })
          s.listen(0, "127.0.0.1", () =>
            resolve({
              url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
              seen,
              cutOff: () => cut,
              close: () => {
                s.closeAllConnections()
                s.close()
              }
            })
          )
        })
    ),
    (s) => Effect.sync(() => s.close())
  )

const get = (url: string, more: Partial<OutboundRequest> = {}) =>
  Effect.flatMap(Effect.service(Outbound), (client) =>
    client.send({ method: "GET", url: new URL(url), headers: {}, timeoutMs: 30_000, maxBytes: 1024 * 1024, ...more })
  )

const withClient = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Layer.fresh(Outbound.layer))

/** Waits on real time until `done()`. */
const until = (done: () => boolean) =>
  Effect.promise(async () => {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 5))
  })

describe("Outbound", () => {
  it.live("a body that passes the cap fails as too-large while it streams in; the connection is closed", () =>
    withClient(
      Effect.gen(function* () {
        const endless = yield* server((_req, res) => {
          res.writeHead(200, { "content-type": "image/webp" })
          const chunk = Buffer.alloc(64 * 1024, 1)
          const more = () => {
            while (!res.destroyed && res.write(chunk)) {}
            if (!res.destroyed) res.once("drain", more)
          }
          more()
        })
        const failure = yield* Effect.flip(get(`${endless.url}/poster.webp`))
        assert.strictEqual(failure.stage, "too-large")
        yield* until(() => endless.cutOff() === 1)
      })
    )
  )

  it.live("a declared Content-Length over the cap is refused before the body", () =>
    withClient(
      Effect.gen(function* () {
        const big = yield* server((_req, res) => {
          res.writeHead(200, { "content-length": String(2 * 1024 ** 3) })
          res.write("x")
        })
        const failure = yield* Effect.flip(get(big.url))
        assert.strictEqual(failure.stage, "too-large")
        assert.include(failure.reason, "larger than 1048576 bytes")
      })
    )
  )

  it.live("redirects: followed when asked, headers to the same origin only; a magnet: Location is the answer", () =>
    withClient(
      Effect.gen(function* () {
        const other = yield* server((_req, res) => res.end("image"))
        const first = yield* server((req, res) => {
          if (req.url === "/away") res.writeHead(302, { location: `${other.url}/img` }).end()
          else if (req.url === "/here") res.writeHead(301, { location: "/away" }).end()
          else res.writeHead(302, { location: "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567" }).end()
        })
        const followed = yield* get(`${first.url}/here`, {
          headers: { "x-api-key": "k3y-for-first-only" },
          redirects: 5
        })
        assert.strictEqual(followed.status, 200)
        assert.strictEqual(followed.url.href, `${other.url}/img`)
        assert.strictEqual(first.seen[1]?.headers["x-api-key"], "k3y-for-first-only", "same origin: kept")
        assert.isUndefined(other.seen[0]?.headers["x-api-key"], "another origin: dropped")
        const notFollowed = yield* get(`${first.url}/here`)
        assert.strictEqual(notFollowed.status, 301, "not asked: the redirect is the answer")
        const magnet = yield* get(`${first.url}/magnet`, { redirects: 5 })
        assert.strictEqual(magnet.status, 302)
        assert.match(magnet.headers.location ?? "", /^magnet:/)
      })
    )
  )

  it.effect("no answer within the deadline (Effect's Clock) fails as timeout and closes the connection", () =>
    withClient(
      Effect.gen(function* () {
        const silent = yield* server(() => undefined)
        const sending = yield* Effect.forkChild(Effect.flip(get(silent.url, { timeoutMs: 15_000 })))
        yield* until(() => silent.seen.length === 1)
        yield* TestClock.adjust("15 seconds")
        const failure = yield* Fiber.join(sending)
        assert.strictEqual(failure.stage, "timeout")
        assert.strictEqual(failure.reason, "no answer within 15s")
        yield* until(() => silent.cutOff() === 1)
      })
    )
  )
})
