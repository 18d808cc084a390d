import * as Http from "node:http"
import * as Os from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import { HealthServer } from "../../src/server/HealthServer.ts"
import { DEFAULT_LISTEN_ADDRESS, type ListenAddress, type ListenSetting } from "../../src/server/ListenAddress.ts"
import { Metrics } from "../../src/server/Metrics.ts"
import { Readiness } from "../../src/server/Readiness.ts"
import { StatusSource } from "../../src/server/StatusSource.ts"
import { occupiedPort } from "./occupiedPort.ts"
import { parsePrometheusText, sampleValue } from "./promText.ts"

const LOOPBACK_ANY_PORT: ListenAddress = { host: "127.0.0.1", port: 0 }

/** The server's inputs: real Metrics and Readiness, a given status document. */
const inputs = (document: StatusSource["Service"]["document"]) =>
  Layer.mergeAll(
    Metrics.layer,
    Readiness.layer({ feedMaxAge: "3 minutes" }),
    Layer.succeed(StatusSource, StatusSource.of({ document }))
  )

/** The server and its inputs, on a fresh ephemeral port. */
const serverLayer = (
  document: StatusSource["Service"]["document"] = Effect.succeed({ status: "ok" }),
  listen: ListenSetting = LOOPBACK_ANY_PORT,
  allowedHosts: ReadonlyArray<string> = []
) => HealthServer.layer({ listen, allowedHosts }).pipe(Layer.provideMerge(inputs(document)))

const withServer = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, serverLayer())

const url = HealthServer.use((server) => Effect.succeed(server.url ?? assert.fail("server is off")))

describe("HealthServer endpoints", () => {
  it.effect("/healthz answers GET and HEAD with 200, uncached", () =>
    Effect.gen(function* () {
      const base = yield* url
      const get = yield* request(base, "GET", "/healthz")
      assert.strictEqual(get.status, 200)
      assert.strictEqual(get.body, "ok\n")
      assert.strictEqual(get.headers["cache-control"], "no-store")
      const head = yield* request(base, "HEAD", "/healthz")
      assert.strictEqual(head.status, 200)
      assert.strictEqual(head.body, "")
    }).pipe(withServer)
  )

  it.effect("/readyz follows the store, the feed's age and sign-in, both ways", () =>
    Effect.gen(function* () {
      const base = yield* url
      const readiness = yield* Readiness
      const readyz = Effect.map(request(base, "GET", "/readyz"), (reply) => ({
        status: reply.status,
        report: JSON.parse(reply.body)
      }))

      const initial = yield* readyz
      assert.strictEqual(initial.status, 503)
      assert.deepStrictEqual(initial.report, {
        ready: false,
        checks: {
          store: { ok: false, detail: "store not open" },
          feed: { ok: false, detail: "feed not polled yet" },
          auth: { ok: false, detail: "not signed in" },
          space: { ok: true, detail: "no transfer waits for disk space" }
        }
      })
      assert.strictEqual((yield* request(base, "HEAD", "/readyz")).status, 503)

      yield* readiness.setStoreOpen(true)
      yield* readiness.setSignedIn(true)
      assert.strictEqual((yield* readyz).status, 503, "the feed has not been polled")
      yield* readiness.feedPolled
      const ready = yield* readyz
      assert.strictEqual(ready.status, 200)
      assert.isTrue(ready.report.ready)
      assert.strictEqual((yield* request(base, "HEAD", "/readyz")).status, 200)

      yield* TestClock.adjust("3 minutes")
      assert.strictEqual((yield* readyz).status, 200, "exactly feedMaxAge old is still recent")
      yield* TestClock.adjust("1 second")
      const stale = yield* readyz
      assert.strictEqual(stale.status, 503)
      assert.deepStrictEqual(stale.report.checks.feed, {
        ok: false,
        detail: "feed last polled 3m 1s ago, more than 3m"
      })
      assert.isTrue(stale.report.checks.store.ok && stale.report.checks.auth.ok)

      yield* readiness.feedPolled
      assert.strictEqual((yield* readyz).status, 200)
      yield* readiness.setSignedIn(false)
      assert.deepStrictEqual((yield* readyz).report.checks.auth, { ok: false, detail: "not signed in" })
      yield* readiness.setSignedIn(true)
      yield* readiness.setWaitingForSpace(2)
      const paused = yield* readyz
      assert.strictEqual(paused.status, 503)
      assert.deepStrictEqual(paused.report.checks.space, {
        ok: false,
        detail: "transfers paused: 2 file(s) wait for free disk space (transfers.min_free_space)"
      })
      yield* readiness.setWaitingForSpace(0)
      assert.strictEqual((yield* readyz).status, 200)
      yield* readiness.setStoreOpen(false)
      assert.strictEqual((yield* readyz).status, 503)
    }).pipe(withServer)
  )

  it.effect("/metrics serves valid Prometheus text with what the daemon recorded", () =>
    Effect.gen(function* () {
      const base = yield* url
      const metrics = yield* Metrics
      yield* metrics.apiRequest('GET /files/{file} "x"\\y', 200)
      yield* metrics.setQueueDepth(3)
      const reply = yield* request(base, "GET", "/metrics")
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
      const families = parsePrometheusText(reply.body)
      assert.strictEqual(
        sampleValue(families, "dlsync_api_requests_total", { operation: 'GET /files/{file} "x"\\y', status: "200" }),
        1
      )
      assert.strictEqual(sampleValue(families, "dlsync_transfer_queue_depth"), 3)
      const head = yield* request(base, "HEAD", "/metrics")
      assert.strictEqual(head.status, 200)
      assert.strictEqual(head.body, "")
    }).pipe(withServer)
  )

  it.effect("/api/status serves the StatusSource document, read fresh on each request", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const document = Effect.map(
        Ref.updateAndGet(calls, (n) => n + 1),
        (n) => ({ generation: n, root: "/data" })
      )
      yield* Effect.gen(function* () {
        const base = yield* url
        const first = yield* request(base, "GET", "/api/status")
        assert.strictEqual(first.status, 200)
        assert.match(first.headers["content-type"] ?? "", /^application\/json/)
        assert.deepStrictEqual(JSON.parse(first.body), { generation: 1, root: "/data" })
        const second = yield* request(base, "GET", "/api/status")
        assert.deepStrictEqual(JSON.parse(second.body), { generation: 2, root: "/data" })
      }).pipe(Effect.provide(serverLayer(document)))
    })
  )

  it.effect("/api/status is a 500 when the document cannot be read, and the server keeps serving", () =>
    Effect.gen(function* () {
      const base = yield* url
      const reply = yield* request(base, "GET", "/api/status")
      assert.strictEqual(reply.status, 500)
      assert.strictEqual(reply.body, "status unavailable\n")
      assert.strictEqual((yield* request(base, "GET", "/healthz")).status, 200)
    }).pipe(Effect.provide(serverLayer(Effect.die(new Error("store closed")))))
  )

  it.effect("other methods are 405 with Allow; other paths are 404", () =>
    Effect.gen(function* () {
      const base = yield* url
      for (const path of ["/healthz", "/readyz", "/metrics", "/api/status"]) {
        for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
          const reply = yield* request(base, method, path)
          assert.strictEqual(reply.status, 405, `${method} ${path}`)
          assert.strictEqual(reply.headers.allow, "GET, HEAD", `${method} ${path}`)
        }
      }
      for (const path of ["/", "/health", "/healthz/x", "/api", "/api/status/x", "/metrics.txt", "/%2e%2e/etc"]) {
        assert.strictEqual((yield* request(base, "GET", path)).status, 404, path)
        assert.strictEqual((yield* request(base, "HEAD", path)).status, 404, path)
      }
      assert.strictEqual((yield* request(base, "POST", "/nope")).status, 404)
      // A query string does not change the route.
      assert.strictEqual((yield* request(base, "GET", "/healthz?verbose=1")).status, 200)
    }).pipe(withServer)
  )
})

describe("HealthServer Host check (DNS rebinding)", () => {
  it.effect("a forged Host gets 403 on every path, with no file names", () =>
    Effect.gen(function* () {
      const base = yield* url
      const port = new URL(base).port
      for (const path of ["/api/status", "/metrics", "/readyz", "/healthz", "/nope"]) {
        for (const host of [`evil.example:${port}`, "evil.example", `127.0.0.1.evil.example:${port}`]) {
          const reply = yield* request(base, "GET", path, { host })
          assert.strictEqual(reply.status, 403, `${host} ${path}`)
          assert.match(reply.body, /server\.allowed_hosts/)
          assert.notInclude(reply.body, "/data")
        }
      }
    }).pipe(Effect.provide(serverLayer(Effect.succeed({ root: "/data" }))))
  )

  it.effect("the listen address, loopback names, IP literals and allowed_hosts entries are answered", () =>
    Effect.gen(function* () {
      const base = yield* url
      const port = new URL(base).port
      const hosts = [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        "LOCALHOST",
        `app.localhost:${port}`,
        `[::1]:${port}`,
        `192.168.1.20:${port}`,
        `nas.lan:${port}`,
        "NAS.lan",
        `media.example:${port}`
      ]
      for (const host of hosts) {
        const reply = yield* request(base, "GET", "/api/status", { host })
        assert.strictEqual(reply.status, 200, host)
      }
      assert.strictEqual((yield* request(base, "GET", "/api/status", { host: `other.lan:${port}` })).status, 403)
    }).pipe(
      Effect.provide(serverLayer(Effect.succeed({ root: "/data" }), LOOPBACK_ANY_PORT, ["nas.lan", "media.example:80"]))
    )
  )
})

describe("HealthServer listening", () => {
  it.effect("the default listens on loopback only: other interfaces of this host refuse", () =>
    Effect.gen(function* () {
      const address = { ...DEFAULT_LISTEN_ADDRESS, port: 0 }
      yield* Effect.gen(function* () {
        const base = yield* url
        assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
        const port = new URL(base).port
        assert.strictEqual((yield* request(base, "GET", "/healthz")).status, 200)
        for (const other of externalAddresses()) {
          const host = other.includes(":") ? `[${other}]` : other
          const refused = yield* Effect.flip(request(`http://${host}:${port}`, "GET", "/healthz"))
          assert.strictEqual(errorCode(refused), "ECONNREFUSED", other)
        }
      }).pipe(Effect.provide(serverLayer(undefined, address)))
    })
  )

  it.effect('":port" listens on every interface, loopback included', () =>
    Effect.gen(function* () {
      const base = yield* url
      const port = new URL(base).port
      assert.notMatch(base, /127\.0\.0\.1/)
      assert.strictEqual((yield* request(`http://127.0.0.1:${port}`, "GET", "/healthz")).status, 200)
    }).pipe(Effect.provide(serverLayer(undefined, { host: undefined, port: 0 })))
  )

  it.effect('"off" starts nothing', () =>
    Effect.gen(function* () {
      const server = yield* HealthServer
      assert.isUndefined(server.url)
    }).pipe(Effect.provide(serverLayer(undefined, "off")))
  )

  it.effect("a port in use fails the layer with HealthServerError naming the address", () =>
    Effect.gen(function* () {
      const port = yield* occupiedPort
      const error = yield* Effect.flip(Layer.build(serverLayer(undefined, { host: "127.0.0.1", port })))
      assert.strictEqual(error._tag, "HealthServerError")
      if (error._tag !== "HealthServerError") return
      assert.strictEqual(error.code, "EADDRINUSE")
      assert.strictEqual(error.listen, `127.0.0.1:${port}`)
      assert.include(error.message, `cannot listen on 127.0.0.1:${port} (server.listen): the address is already in use`)
    })
  )

  it.effect("stops gracefully: refuses new connections, finishes the request in flight, then closes", () =>
    Effect.gen(function* () {
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const document = Effect.andThen(
        Deferred.succeed(entered, undefined),
        Effect.as(Deferred.await(gate), { late: true })
      )
      const scope = yield* Scope.make()
      const services = yield* Layer.buildWithScope(serverLayer(document), scope)
      const base = yield* url.pipe(Effect.provideContext(services))

      const inFlight = yield* Effect.forkChild(request(base, "GET", "/api/status"))
      yield* Deferred.await(entered)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      // The listening socket goes first, so a new connection is refused while the old one finishes.
      yield* Effect.eventually(
        Effect.flatMap(Effect.flip(request(base, "GET", "/healthz")), (error) =>
          errorCode(error) === "ECONNREFUSED" ? Effect.void : Effect.fail(error)
        )
      )
      yield* Deferred.succeed(gate, undefined)
      const reply = yield* Fiber.join(inFlight)
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(JSON.parse(reply.body), { late: true })
      yield* Fiber.join(closing)
      assert.strictEqual(errorCode(yield* Effect.flip(request(base, "GET", "/healthz"))), "ECONNREFUSED")
    })
  )
})

interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** One request on a fresh connection (no keep-alive), so shutdown never waits on an idle socket. */
const request = (base: string, method: string, path: string, headers: Readonly<Record<string, string>> = {}) =>
  Effect.callback<Reply, Error>((resume) => {
    const req = Http.request(new URL(path, base), { method, agent: false, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () =>
        resume(
          Effect.succeed({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8")
          })
        )
      )
      res.on("error", (error) => resume(Effect.fail(error)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
    return Effect.sync(() => req.destroy())
  })

const errorCode = (error: Error): string | undefined =>
  "code" in error && typeof error.code === "string" ? error.code : undefined

/** This host's non-loopback addresses (none in a bare container; then only the bind is checked). */
const externalAddresses = (): ReadonlyArray<string> =>
  Object.values(Os.networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && !entry.address.startsWith("fe80:"))
    .map((entry) => entry.address)
