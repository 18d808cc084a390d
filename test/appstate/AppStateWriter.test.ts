/** The app-state writer against the emulator: conditional writes, 412 merge, 404, 429 budget, coalescing. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, Queue, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { FileId } from "../../src/api/schemas/common.ts"
import { AppStateOutbox } from "../../src/appstate/AppStateOutbox.ts"
import { AppStateWriter, AUTH_BACKOFF_MS } from "../../src/appstate/AppStateWriter.ts"
import { type ProgressState, progressEntry } from "../../src/appstate/ProgressEntry.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { transportLayer, useEmulator } from "../auth/support/fixtures.ts"
import { makePutSignals, type PutSignals, signallingClient } from "./support/apiSignals.ts"

const DEVICE = "0b5c3c5e-1111-4222-8333-444455556666"
const OTHER_DEVICE = "9f9f9f9f-1111-4222-8333-444455556666"
const fileId = Schema.decodeSync(FileId)

const clientLayer = (e: RunningEmulator, bearer = e.accessToken) =>
  ApiClient.layer.pipe(
    Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
    Layer.provide(Credentials.apiKey(Redacted.make(bearer))),
    Layer.provideMerge(transportLayer(e))
  )

const writerLayer = (e: RunningEmulator, bearer = e.accessToken, signals?: PutSignals) =>
  AppStateWriter.layer({ deviceId: DEVICE, progressIntervalMs: 30_000, maxRequestsPerMinute: 300 }).pipe(
    Layer.provideMerge(AppStateOutbox.layerMemory),
    Layer.provideMerge(
      signals === undefined
        ? clientLayer(e, bearer)
        : signallingClient(signals).pipe(Layer.provide(clientLayer(e, bearer)))
    )
  )

let clock = 1_700_000_000_000
/** Entries with increasing timestamps, as a transfer would report them. */
const entry = (state: ProgressState, bytes: number) =>
  progressEntry({ state, bytes, size: 100, path: "Movies/a.mkv", updatedAtMs: clock++ })

/** The writer's warnings as a queue: a refusal is logged just before the writer waits. */
const warnings = Effect.gen(function* () {
  const queue = yield* Queue.unbounded<string>()
  const logger = Logger.make((options) => {
    if (options.logLevel === "Warn") Queue.offerUnsafe(queue, String(options.message))
  })
  return { queue, layer: Logger.layer([logger]) }
})

const statePuts = (e: RunningEmulator, id: string) =>
  e.control.requests().filter((r) => r.method === "PUT" && r.path === `/api/v1/files/${id}/state`)

const stateOf = (id: string) =>
  Effect.gen(function* () {
    return yield* (yield* ApiClient).state.get(fileId(id))
  })

describe("AppStateWriter", () => {
  it.effect("creates with If-None-Match: * and replaces with If-Match carrying the full quoted ETag", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), entry("queued", 0))
        yield* writer.drain
        const first = yield* stateOf(file.id)
        const complete = entry("complete", 100)
        yield* writer.report(fileId(file.id), complete)
        yield* writer.drain
        const puts = statePuts(e, file.id)
        assert.strictEqual(puts.length, 2)
        assert.strictEqual(puts[0]!.headers["if-none-match"], "*")
        assert.match(first!.etag, /^"[^"]+"$/)
        assert.strictEqual(puts[1]!.headers["if-match"], first!.etag)
        assert.deepStrictEqual((yield* stateOf(file.id))!.value, { dlsync: { [DEVICE]: { ...complete } } })
        assert.strictEqual((yield* writer.stats).written, 2)
      }).pipe(Effect.provide(writerLayer(e), { local: true }))
    })
  )

  it.effect("a 412 re-reads and merges: a concurrent writer's keys and other devices' entries are kept", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      const id = fileId(file.id)
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        const api = yield* ApiClient
        yield* writer.report(id, entry("downloading", 10))
        yield* writer.drain
        // Another device (and another feature of the app) writes between our writes.
        const seen = (yield* api.state.get(id))!
        const theirs = entry("complete", 100)
        yield* api.state.put(
          id,
          {
            ...seen.value,
            player: { position_ms: 1234 },
            dlsync: { ...devicesOf(seen.value), [OTHER_DEVICE]: { ...theirs } }
          },
          { ifMatch: seen.etag }
        )
        const ours = entry("complete", 100)
        yield* writer.report(id, ours)
        yield* writer.drain
        const final = (yield* api.state.get(id))!.value
        assert.deepStrictEqual(final, {
          player: { position_ms: 1234 },
          dlsync: { [OTHER_DEVICE]: { ...theirs }, [DEVICE]: { ...ours } }
        })
        const stats = yield* writer.stats
        assert.strictEqual(stats.preconditionFailures, 1)
        assert.strictEqual(
          e.control.requests().filter((r) => r.path === `/api/v1/files/${file.id}/state` && r.status === 412).length,
          1
        )
      }).pipe(Effect.provide(writerLayer(e), { local: true }))
    })
  )

  it.effect("a file that is gone (404) drops the write", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      e.control.remove([file.id])
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), entry("complete", 100))
        yield* writer.drain
        assert.strictEqual((yield* writer.stats).dropped, 1)
        assert.strictEqual(yield* (yield* AppStateOutbox).size, 0)
        assert.strictEqual(statePuts(e, file.id).length, 0)
      }).pipe(Effect.provide(writerLayer(e), { local: true }))
    })
  )

  // Real time: after the pause the writer's own budget spaces a GET and a PUT around real
  // HTTP round trips; it gives no signal for those waits that a TestClock test could follow.
  it.live("a 429 waits for Retry-After, halves the budget, and the entry is still written", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      e.control.addFault({ kind: "status_429", path: "/api/v1/files/*/state", method: "PUT", retryAfterSeconds: 1 })
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), entry("complete", 100))
        yield* writer.drain
        const puts = statePuts(e, file.id)
        assert.deepStrictEqual(
          puts.map((p) => p.status),
          [429, 200]
        )
        assert.isAtLeast(puts[1]!.at - puts[0]!.at, 1_000)
        const stats = yield* writer.stats
        assert.strictEqual(stats.rateLimited, 1)
        assert.strictEqual(stats.ratePerMinute, 150)
        assert.strictEqual(stats.written, 1)
      }).pipe(Effect.provide(writerLayer(e), { local: true }))
    })
  )

  it.effect("while downloading, one write per progress interval; transitions at once", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      const id = fileId(file.id)
      const signals = yield* makePutSignals
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        // The next PUT's answer, then: `n` written in all.
        const written = (n: number) =>
          Effect.gen(function* () {
            yield* Queue.take(signals.statePuts)
            assert.strictEqual(statePuts(e, file.id).filter((p) => p.status === 200).length, n)
          })
        yield* writer.report(id, entry("queued", 0))
        yield* written(1)
        // The first downloading report is a transition; the next nine are held (latest wins).
        for (let bytes = 1; bytes <= 10; bytes++) yield* writer.report(id, entry("downloading", bytes))
        yield* written(2)
        yield* TestClock.adjust("30 seconds")
        yield* written(3)
        assert.deepStrictEqual(bytesOf((yield* stateOf(file.id))!.value), 10)
        yield* writer.report(id, entry("complete", 100))
        yield* written(4)
        assert.strictEqual(statePuts(e, file.id).length, 4)
      }).pipe(Effect.provide(writerLayer(e, e.accessToken, signals), { local: true }))
    })
  )

  it.effect("reports return at once while the service fails; the outbox keeps one entry per file", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      e.control.addFault({ kind: "status_503", path: "/api/v1/files/*/state", count: 1_000 })
      const files = Array.from({ length: 20 }, (_, i) => e.control.addFile({ name: `f${i}.mkv`, sizeBytes: 100 }))
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        for (const f of files) {
          yield* writer.report(fileId(f.id), entry("queued", 0))
          yield* writer.report(fileId(f.id), entry("complete", 100))
        }
        assert.strictEqual(yield* (yield* AppStateOutbox).size, 20)
        assert.strictEqual((yield* writer.stats).written, 0)
      }).pipe(Effect.provide(writerLayer(e), { local: true }))
    })
  )

  it.effect("drain gives up after DRAIN_MAX_WAIT_MS of refusals and keeps the entry queued", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      const logs = yield* warnings
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), entry("complete", 100))
        const drained = yield* Effect.forkChild(writer.drain)
        // Every attempt is refused (401); drain waits AUTH_BACKOFF_MS twice, then stops. The
        // writer's own background pass is refused too, so the refusals alone do not tell
        // where the drain is: after each refusal (logged just before the wait) the clock
        // moves on, until the drain ends.
        let backoffs = 0
        while (true) {
          const next = yield* Effect.raceFirst(
            Fiber.await(drained).pipe(Effect.as("drained" as const)),
            Queue.take(logs.queue).pipe(Effect.as("refused" as const))
          )
          if (next === "drained") break
          assert.isBelow(backoffs, 10, "the drain never gave up")
          yield* TestClock.adjust(AUTH_BACKOFF_MS)
          backoffs++
        }
        assert.isFalse(yield* Fiber.join(drained))
        assert.isAtLeast(backoffs, 2, "gave up before waiting out DRAIN_MAX_WAIT_MS")
        assert.isAtLeast(e.control.requests().filter((r) => r.status === 401).length, 3)
        assert.strictEqual(yield* (yield* AppStateOutbox).size, 1)
      }).pipe(Effect.provide(writerLayer(e, "at_not_valid"), { local: true }), Effect.provide(logs.layer))
    })
  )

  it.effect("the disabled writer (API-key mode) sends nothing", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), entry("complete", 100))
        yield* writer.drain
      }).pipe(Effect.provide(AppStateWriter.disabled))
      assert.strictEqual(e.control.requests().length, 0)
    })
  )
})

/** The `dlsync` section of a state value, by device. */
const devicesOf = (value: unknown) =>
  Schema.decodeUnknownSync(Schema.Struct({ dlsync: Schema.Record(Schema.String, Schema.Json) }))(value).dlsync

/** This device's `bytes` in a state value. */
const bytesOf = (value: unknown) =>
  Schema.decodeUnknownSync(
    Schema.Struct({ dlsync: Schema.Record(Schema.String, Schema.Struct({ bytes: Schema.Number })) })
  )(value).dlsync[DEVICE]?.bytes
