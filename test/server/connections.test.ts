/**
 * Connections to dlsync's local servers are bounded per client address and in total, and
 * no client can shut the others out: a connection beyond a bound takes the place of the
 * oldest idle one (no request being answered), never of one serving a request. Driven from
 * several addresses of this host (127.0.0.x) with sockets that send nothing.
 */
import * as Http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option, Redacted, Schedule } from "effect"
import { Intake } from "../../src/intake/Intake.ts"
import { SabnzbdServer } from "../../src/sabnzbd/SabnzbdServer.ts"
import { HealthServer } from "../../src/server/HealthServer.ts"
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS } from "../../src/server/LocalServer.ts"
import { Metrics } from "../../src/server/Metrics.ts"
import { Readiness } from "../../src/server/Readiness.ts"
import { StatusSource } from "../../src/server/StatusSource.ts"
import { PASSWORD, startQbit, USERNAME } from "../qbittorrent/harness.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { idleSockets } from "../support/rawHttp.ts"

/** A hostile client's 500 connections that send nothing. */
const FLOOD = 500

const healthServer = (document: StatusSource["Service"]["document"] = Effect.succeed({ ok: true })) =>
  Layer.build(
    HealthServer.layer({ listen: { host: "127.0.0.1", port: 0 } }).pipe(
      Layer.provide(
        Layer.mergeAll(
          Metrics.layer,
          Readiness.layer({ feedMaxAge: "3 minutes" }),
          Layer.succeed(StatusSource, StatusSource.of({ document }))
        )
      )
    )
  ).pipe(Effect.map((context) => Context.get(context, HealthServer).url ?? assert.fail("the server is off")))

describe("local servers: connections", () => {
  it.live("500 idle connections from the probe's own address: /healthz still answers, and only a few are held", () =>
    Effect.gen(function* () {
      const base = yield* healthServer()
      const flood = yield* idleSockets(base, FLOOD)
      assert.strictEqual((yield* get(base, "/healthz")).status, 200)
      yield* until(() => flood.open() <= MAX_CONNECTIONS_PER_ADDRESS)
      // The newest stay (the oldest idle ones made room).
      assert.isFalse(flood.sockets.at(-1)?.destroyed ?? true)
    }).pipe(Effect.scoped)
  )

  it.live("a connection serving a request is never closed to make room", () =>
    Effect.gen(function* () {
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const base = yield* healthServer(
        Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(gate), { late: true }))
      )
      const inFlight = yield* Effect.forkChild(get(base, "/api/status"))
      yield* Deferred.await(entered)
      yield* idleSockets(base, FLOOD)
      assert.strictEqual((yield* get(base, "/healthz")).status, 200)
      yield* Deferred.succeed(gate, undefined)
      const reply = yield* Fiber.join(inFlight)
      assert.deepStrictEqual([reply.status, JSON.parse(reply.body)], [200, { late: true }])
    }).pipe(Effect.scoped)
  )

  it.live("at most MAX_CONNECTIONS in all: idle clients of many addresses fill it, a new client still gets in", () =>
    Effect.gen(function* () {
      const base = yield* healthServer()
      const addresses = Math.ceil(MAX_CONNECTIONS / MAX_CONNECTIONS_PER_ADDRESS) + 1
      const floods = yield* Effect.forEach(
        Array.from({ length: addresses }, (_, i) => `127.0.1.${i + 1}`),
        (address) => idleSockets(base, MAX_CONNECTIONS_PER_ADDRESS, address)
      )
      assert.strictEqual((yield* get(base, "/healthz")).status, 200)
      const held = () => floods.reduce((n, f) => n + f.open(), 0)
      yield* until(() => held() < MAX_CONNECTIONS)
      // Room is made where the most connections are held: every address keeps most of its own.
      assert.isTrue(floods.every((f) => f.open() >= MAX_CONNECTIONS_PER_ADDRESS / 2))
    }).pipe(Effect.scoped)
  )

  it.live("the qBittorrent and SABnzbd APIs answer other clients while one address holds 500 idle connections", () =>
    Effect.gen(function* () {
      const qbit = yield* startQbit()
      const memory = makeMemoryIntake("/srv/dlsync")
      const sab = yield* Layer.build(
        SabnzbdServer.layer({
          settings: {
            listen: { host: "127.0.0.1", port: 0 },
            apiKey: Option.some(Redacted.make("k")),
            pathMap: [],
            categories: []
          },
          root: "/srv/dlsync"
        }).pipe(Layer.provide(Layer.succeed(Intake, memory.intake)))
      ).pipe(Effect.map((context) => Context.get(context, SabnzbdServer).url ?? assert.fail("the API is off")))
      yield* idleSockets(qbit.url, FLOOD, "127.0.0.2")
      yield* idleSockets(sab, FLOOD, "127.0.0.2")
      const basic = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`
      const version = yield* get(qbit.url, "/api/v2/app/webapiVersion", { authorization: basic })
      assert.deepStrictEqual([version.status, version.body], [200, "2.11.2"])
      const queue = yield* get(sab, "/api?mode=queue&output=json&apikey=k")
      assert.strictEqual(queue.status, 200)
      assert.property(JSON.parse(queue.body), "queue")
    }).pipe(Effect.scoped)
  )
})

/** Waits, looking every 10 ms, until `condition` holds (the test's timeout ends a wait in vain). */
const until = (condition: () => boolean) =>
  Effect.suspend(() => (condition() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry({ schedule: Schedule.spaced("10 millis") })
  )

/** One GET on a fresh connection from 127.0.0.1. */
const get = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.callback<{ status: number; body: string }, Error>((resume) => {
    const req = Http.request(new URL(path, base), { agent: false, headers }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString()
      })
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
      res.on("error", (error) => resume(Effect.fail(error)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
    return Effect.sync(() => req.destroy())
  })
