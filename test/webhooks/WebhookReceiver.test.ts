/**
 * The webhook receiver over real HTTP on loopback, with a real state database: deliveries
 * signed by the `standardwebhooks` package, the clock under TestClock.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, type Duration, Effect, Exit, Fiber, Layer, Redacted, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { PollRequests } from "../../src/events/PollRequests.ts"
import { Database } from "../../src/store/Database.ts"
import { makeWebhookDeliveryTable } from "../../src/store/webhookDeliveryTable.ts"
import { WebhookReceiver } from "../../src/webhooks/WebhookReceiver.ts"
import { occupiedPort } from "../server/occupiedPort.ts"
import { idleSockets } from "../support/rawHttp.ts"

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const NEW_SECRET = "whsec_5u0wJCNVdD3yoHQ0SAZF2MU1+FN1DIa3d4zyUZ1GEUs="
const NOW = 1_800_000_000
const BODY = JSON.stringify({ id: "evt_1", type: "download.completed", data: { id: "dl_1", status: "completed" } })

interface Reply {
  readonly status: number
  readonly body: string
  readonly headers: Http.IncomingHttpHeaders
}

/** A state dir for the test's life. */
const stateDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-webhooks-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/**
 * A receiver on an ephemeral loopback port over the state db in `dir`, built in `scope`;
 * `polls` counts the poll requests it made.
 */
const startReceiver = Effect.fnUntraced(function* (
  dir: string,
  options: {
    readonly secrets?: ReadonlyArray<string>
    readonly bodyTimeout?: Duration.Input
    readonly scope?: Scope.Scope
  } = {}
) {
  const polls = yield* Ref.make(0)
  const layer = WebhookReceiver.layer({
    listen: { host: "127.0.0.1", port: 0 },
    secrets: (options.secrets ?? [SECRET]).map((s) => Redacted.make(s)),
    ...(options.bodyTimeout === undefined ? {} : { bodyTimeout: options.bodyTimeout })
  }).pipe(
    Layer.provideMerge(Database.layer(dir)),
    Layer.provide(Layer.succeed(PollRequests, { request: Ref.update(polls, (n) => n + 1), next: Effect.never }))
  )
  const scope = options.scope ?? (yield* Effect.scope)
  const services = yield* Layer.buildWithScope(layer, scope)
  const receiver = Context.get(services, WebhookReceiver)
  const { db } = Context.get(services, Database)
  const url = receiver.url ?? assert.fail("receiver is off")
  return {
    url,
    port: Number(new URL(url).port),
    polls: Ref.get(polls),
    /** Ids in webhook_deliveries now. */
    remembered: Effect.sync(() => makeWebhookDeliveryTable(db).count())
  }
})

/** Headers of a delivery signed now (TestClock) with `secret`. */
const signed = Effect.fnUntraced(function* (
  id: string,
  body = BODY,
  secrets: ReadonlyArray<string> = [SECRET],
  at?: number
) {
  const seconds = at ?? Math.floor((yield* Clock.currentTimeMillis) / 1000)
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": secrets.map((s) => new Webhook(s).sign(id, new Date(seconds * 1000), body)).join(" ")
  }
})

describe("WebhookReceiver", () => {
  it.effect("a valid delivery is accepted at once and asks for one poll; its redelivery is dropped", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const first = yield* post(receiver.url, yield* signed("msg_1"))
      assert.strictEqual(first.status, 200)
      assert.strictEqual(first.body, "accepted\n")
      assert.strictEqual(yield* receiver.polls, 1)

      // At least once: the same event again, with a fresh timestamp and signature.
      yield* TestClock.adjust("90 seconds")
      const again = yield* post(receiver.url, yield* signed("msg_1"))
      assert.strictEqual(again.status, 200, "acknowledged, so the service stops retrying")
      assert.strictEqual(again.body, "duplicate\n")
      assert.strictEqual(yield* receiver.polls, 1, "no second poll")

      const other = yield* post(receiver.url, yield* signed("msg_2"))
      assert.strictEqual(other.body, "accepted\n")
      assert.strictEqual(yield* receiver.polls, 2)
    })
  )

  it.effect("a replayed id is dropped after a restart: a new receiver on the same state db", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const dir = yield* stateDir
      const headers = yield* signed("msg_replayed")
      const firstLife = yield* Scope.make()
      const before = yield* startReceiver(dir, { scope: firstLife })
      assert.strictEqual((yield* post(before.url, headers)).body, "accepted\n")
      yield* Scope.close(firstLife, Exit.void)

      const after = yield* startReceiver(dir)
      const replay = yield* post(after.url, headers)
      assert.strictEqual(replay.status, 200)
      assert.strictEqual(replay.body, "duplicate\n")
      assert.strictEqual(yield* after.polls, 0)
    })
  )

  it.effect("ids are forgotten once their delivery could no longer verify, and only then", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const captured = yield* signed("msg_old")
      assert.strictEqual((yield* post(receiver.url, captured)).body, "accepted\n")
      // Within the window the capture is a duplicate; past it, stale; the id's row goes.
      yield* TestClock.adjust("5 minutes")
      assert.strictEqual((yield* post(receiver.url, captured)).body, "duplicate\n")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* post(receiver.url, captured)).status, 400)
      assert.strictEqual(yield* receiver.remembered, 1, "kept through the margin for clock skew")
      // Past the window and its margin, the next delivery prunes the row: the table stays small.
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_new"))).body, "accepted\n")
      assert.strictEqual(yield* receiver.remembered, 1, "only msg_new")
      assert.strictEqual(yield* receiver.polls, 2)
    })
  )

  it.effect("bad signatures are refused with 401 and leave no trace: the real delivery still counts", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const forged = yield* signed("msg_3", BODY, [NEW_SECRET])
      const refused = yield* post(receiver.url, forged)
      assert.strictEqual(refused.status, 401)
      assert.strictEqual(refused.body, "signature does not match\n")
      assert.notInclude(refused.body, SECRET.slice(6))
      const tampered = yield* post(receiver.url, yield* signed("msg_3"), BODY.replace("completed", "failed"))
      assert.strictEqual(tampered.status, 401)
      assert.strictEqual(yield* receiver.polls, 0)
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_3"))).body, "accepted\n")
    })
  )

  it.effect("rotation: old and new secrets configured, deliveries under either (or both entries) verify", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir, { secrets: [SECRET, NEW_SECRET] })
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_old_key", BODY, [SECRET]))).status, 200)
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_new_key", BODY, [NEW_SECRET]))).status, 200)
      const both = yield* signed("msg_both", BODY, [NEW_SECRET, SECRET])
      assert.strictEqual((yield* post(receiver.url, both)).status, 200)
      assert.strictEqual(yield* receiver.polls, 3)
    })
  )

  it.effect("stale and future timestamps beyond five minutes are refused; at the edge they pass", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const outside = "webhook-timestamp is more than five minutes from this host's clock\n"
      const stale = yield* post(receiver.url, yield* signed("msg_stale", BODY, [SECRET], NOW - 301))
      assert.deepStrictEqual([stale.status, stale.body], [400, outside])
      const future = yield* post(receiver.url, yield* signed("msg_future", BODY, [SECRET], NOW + 301))
      assert.deepStrictEqual([future.status, future.body], [400, outside])
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_edge1", BODY, [SECRET], NOW - 300))).status, 200)
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_edge2", BODY, [SECRET], NOW + 300))).status, 200)
      // The receiver's clock moves on: the same signed headers go stale.
      const later = yield* signed("msg_later")
      yield* TestClock.adjust("301 seconds")
      assert.strictEqual((yield* post(receiver.url, later)).status, 400)
      assert.strictEqual(yield* receiver.polls, 2)
    })
  )

  it.effect("malformed timestamps are refused with 400", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      // (Leading and trailing blanks are the HTTP parser's to strip: verifyDelivery.test.ts covers them.)
      for (const timestamp of ["1.8e9", `${NOW}e0`, "0x6b49d200", `${NOW}.0`, `+${NOW}`, `0${NOW}`]) {
        const headers = { ...(yield* signed("msg_ts")), "webhook-timestamp": timestamp }
        const reply = yield* post(receiver.url, headers)
        assert.strictEqual(reply.status, 400, timestamp)
        assert.strictEqual(reply.body, "missing or malformed webhook-timestamp (whole seconds expected)\n")
      }
      assert.strictEqual(yield* receiver.polls, 0)
    })
  )

  it.effect("a 10 MB body is refused with 413 before it is read, and the receiver goes on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const headers = yield* signed("msg_big")
      // Only the head is sent: the answer cannot have waited for the body.
      const declared = yield* raw(
        receiver.port,
        head({ ...headers, "content-length": String(10 * 1024 * 1024) }),
        () => undefined
      )
      assert.match(declared, /^HTTP\/1\.1 413 /)
      assert.include(declared, "connection: close")

      // Chunked, no length declared: refused once more than 1 MiB has come.
      const chunk = Buffer.alloc(64 * 1024, 0x61)
      const chunked = yield* raw(receiver.port, head({ ...headers, "transfer-encoding": "chunked" }), (socket) => {
        for (let i = 0; i < 160; i++) {
          if (socket.destroyed) return
          socket.write(`${chunk.length.toString(16)}\r\n`)
          socket.write(chunk)
          socket.write("\r\n")
        }
      })
      assert.match(chunked, /^HTTP\/1\.1 413 /)
      assert.strictEqual(yield* receiver.polls, 0)
      assert.strictEqual((yield* post(receiver.url, yield* signed("msg_small"))).status, 200)
    })
  )

  it.live("500 idle connections from one address shut no delivery out", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(yield* stateDir)
      yield* idleSockets(receiver.url, 500, "127.0.0.2")
      const seconds = Math.floor(Date.now() / 1000)
      const headers = {
        "webhook-id": "msg_flood",
        "webhook-timestamp": String(seconds),
        "webhook-signature": new Webhook(SECRET).sign("msg_flood", new Date(seconds * 1000), BODY)
      }
      assert.strictEqual((yield* post(receiver.url, headers)).status, 200)
      assert.strictEqual(yield* receiver.polls, 1)
    })
  )

  it.effect("answers any Host (a reverse proxy's public name); 405 for other methods, 404 for other paths", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const receiver = yield* startReceiver(yield* stateDir)
      const proxied = yield* post(receiver.url, { ...(yield* signed("msg_proxy")), host: "dlsync.example.com" })
      assert.strictEqual(proxied.status, 200)
      const get = yield* post(receiver.url, {}, "", "GET")
      assert.strictEqual(get.status, 405)
      assert.strictEqual(get.headers.allow, "POST")
      assert.strictEqual((yield* post(`${receiver.url}/hooks`, yield* signed("msg_path"))).status, 404)
      assert.strictEqual(yield* receiver.polls, 1)
    })
  )

  it.effect("a port in use fails the layer with one line naming webhooks.listen", () =>
    Effect.gen(function* () {
      const port = yield* occupiedPort
      const error = yield* Effect.flip(
        Layer.build(
          WebhookReceiver.layer({
            listen: { host: "127.0.0.1", port },
            secrets: [Redacted.make(SECRET)]
          }).pipe(Layer.provide([Database.layer(yield* stateDir), PollRequests.layer]))
        )
      )
      assert.strictEqual(error._tag, "HealthServerError")
      if (error._tag !== "HealthServerError") return
      assert.strictEqual(error.code, "EADDRINUSE")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${port} (webhooks.listen): the address is already in use; choose another address or set it to "off"`
      )
    })
  )

  it.live(
    "a slow sender (a byte a second) gets 408 when the body timeout passes, and holds nobody else up",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startReceiver(yield* stateDir, { bodyTimeout: "2 seconds" })
        const started = Date.now()
        const slow = yield* Effect.forkChild(
          raw(receiver.port, head({ "content-length": "100", "webhook-id": "msg_slow" }), (socket) => {
            const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write("x")), 1_000)
            socket.on("close", () => clearInterval(timer))
          })
        )
        // Meanwhile a real delivery is served at once.
        const seconds = Math.floor(Date.now() / 1000)
        const headers = {
          "webhook-id": "msg_fast",
          "webhook-timestamp": String(seconds),
          "webhook-signature": new Webhook(SECRET).sign("msg_fast", new Date(seconds * 1000), BODY)
        }
        const fast = yield* post(receiver.url, headers)
        assert.strictEqual(fast.status, 200)
        assert.isBelow(Date.now() - started, 1_500)
        const answer = yield* Fiber.join(slow)
        const waited = Date.now() - started
        assert.match(answer, /^HTTP\/1\.1 408 /)
        assert.include(answer, "body not received in time")
        assert.isAtLeast(waited, 1_900)
        assert.isBelow(waited, 6_000)
        assert.strictEqual(yield* receiver.polls, 1)
      }),
    20_000
  )
})

// ---------------------------------------------------------------------------------------

const post = (url: string, headers: Readonly<Record<string, string>>, body: string = BODY, method = "POST") =>
  Effect.callback<Reply, Error>((resume) => {
    const req = Http.request(url, { method, agent: false, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () =>
        resume(
          Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() })
        )
      )
      res.on("error", (error) => resume(Effect.fail(error)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end(method === "GET" ? undefined : body)
    return Effect.sync(() => req.destroy())
  })

/** A POST / request head with `headers`. */
const head = (headers: Readonly<Record<string, string>>) =>
  `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`

/** Sends `text` on a raw connection, then lets `feed` write more; the whole answer once the server closes. */
const raw = (port: number, text: string, feed: (socket: Net.Socket) => void) =>
  Effect.callback<string, Error>((resume) => {
    const socket = Net.connect({ host: "127.0.0.1", port })
    let answer = ""
    socket.on("data", (data: Buffer) => {
      answer += data.toString("latin1")
    })
    // Writes after the server closed fail with EPIPE/ECONNRESET: the answer is what counts.
    socket.on("error", () => undefined)
    socket.on("close", () => resume(Effect.succeed(answer)))
    socket.write(text, () => feed(socket))
    return Effect.sync(() => socket.destroy())
  })
