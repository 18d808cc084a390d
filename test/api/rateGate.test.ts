/**
 * The client's shared rate-limit gate: one 429 with Retry-After holds back every request
 * of its group, from every fiber, until Retry-After has passed; then the pace comes back
 * gradually. Driven under TestClock over an in-memory wire that records when (on the
 * Effect clock) each request went out, so "no request inside the window" is exact.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttpSettings } from "../../src/api/ApiHttp.ts"
import type { ApiTransport } from "../../src/api/ApiTransport.ts"
import {
  admit,
  closeGate,
  RAMP_DOUBLING_MS,
  RAMP_OPEN_PER_SECOND,
  RAMP_START_PER_SECOND,
  type RateGate,
  rateLimitGroup
} from "../../src/api/rateGate.ts"
import { account, appState, fileId as fid } from "./fixtures.ts"
import { clientOver as memoryClientOver, memoryWire, ok, tooMany } from "./memoryApi.ts"
import { FAST_SETTINGS } from "./testServer.ts"

const link = ok({ url: "https://cdn.example/f?sig=1", expires_at: null })

const waits: Array<{ operation: string; millis: number }> = []

const clientOver = (wire: Layer.Layer<ApiTransport>) =>
  Layer.mergeAll(
    memoryClientOver(wire, {
      request: () => Effect.void,
      retry: () => Effect.void,
      rateLimitWait: (operation, millis) => Effect.sync(() => waits.push({ operation, millis }))
    }),
    Layer.succeed(ApiHttpSettings, {
      ...FAST_SETTINGS,
      schedule: { ...FAST_SETTINGS.schedule, maxInlineWaitMs: 60_000 }
    })
  ).pipe(Layer.orDie)

/** Moves the test clock on in 50 ms steps until `fiber` is done. */
const runToEnd = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400 && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust("50 millis")
    return yield* Fiber.join(fiber)
  })

const LINK = /\/download-link$/

describe("rate gate (ApiHttp)", () => {
  it.effect("one 429 with Retry-After: 2 holds every link request of every fiber for 2 s, then ramps up", () =>
    Effect.gen(function* () {
      waits.length = 0
      const wire = memoryWire((_method, path, n) => (LINK.test(path) && n === 0 ? tooMany(2) : link))
      const fiber = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => fid(`f_${i + 1}`)),
        (id) => ApiClient.use((c) => c.files.downloadLink(id)),
        { concurrency: "unbounded" }
      ).pipe(Effect.provide(clientOver(wire.layer)), Effect.forkChild)
      const links = yield* runToEnd(fiber)
      assert.strictEqual(links.length, 8)

      const first429 = wire.sent.findIndex((s) => s.status === 429)
      assert.strictEqual(first429, 0)
      const limitedAt = wire.sent[first429]?.at ?? 0
      const after = wire.sent.slice(first429 + 1).filter((s) => LINK.test(s.path))
      assert.strictEqual(after.length, 8, "the 429'd request and the seven others, each sent once")
      for (const s of after)
        assert.isAtLeast(s.at - limitedAt, 2_000, `a link request ${s.at - limitedAt} ms after the 429`)
      // The pace comes back gradually: RAMP_START_PER_SECOND in the first second after the pause.
      const firstSecond = after.filter((s) => s.at - limitedAt < 2_000 + RAMP_DOUBLING_MS)
      assert.strictEqual(firstSecond.length, RAMP_START_PER_SECOND)
      // Every request that was held back is counted, by route template.
      assert.isAtLeast(waits.length, 7)
      assert.isTrue(waits.every((w) => w.operation === "POST /files/{file}/download-link" && w.millis > 0))
    })
  )

  it.effect("another operation is not held back by a link request's 429", () =>
    Effect.gen(function* () {
      const wire = memoryWire((_method, path, n) => (LINK.test(path) ? (n === 0 ? tooMany(2) : link) : ok(account)))
      const fiber = yield* Effect.gen(function* () {
        const c = yield* ApiClient
        const held = yield* Effect.forkChild(c.files.downloadLink(fid("f_1")))
        yield* c.account.get
        yield* Fiber.join(held)
      }).pipe(Effect.provide(clientOver(wire.layer)), Effect.forkChild)
      yield* runToEnd(fiber)
      const accountAt = wire.sent.find((s) => s.path.endsWith("/account"))?.at
      assert.strictEqual(accountAt, 0)
    })
  )

  it.effect("file-state reads and writes share one gate (the spec limits them together)", () =>
    Effect.gen(function* () {
      const wire = memoryWire((method, _path, n) =>
        method === "PUT" && n === 0 ? tooMany(3) : ok(method === "GET" ? null : appState)
      )
      const fiber = yield* Effect.gen(function* () {
        const c = yield* ApiClient
        const put = yield* Effect.forkChild(c.state.put(fid("f_1"), { a: 1 }, { ifNoneMatch: "*" }))
        yield* Effect.yieldNow
        yield* c.state.get(fid("f_2"))
        yield* Fiber.join(put)
      }).pipe(Effect.provide(clientOver(wire.layer)), Effect.forkChild)
      yield* runToEnd(fiber)
      const read = wire.sent.find((s) => s.method === "GET")
      assert.isAtLeast(read?.at ?? 0, 3_000)
    })
  )

  it.effect("a pause longer than one call waits inline fails the next call at once, unsent, with the time left", () =>
    Effect.gen(function* () {
      const wire = memoryWire((_method, _path, n) => (n === 0 ? tooMany(3_600) : link))
      const [first, second] = yield* Effect.gen(function* () {
        const c = yield* ApiClient
        const a = yield* Effect.flip(c.files.downloadLink(fid("f_1")))
        yield* TestClock.adjust("10 seconds")
        const b = yield* Effect.flip(c.files.downloadLink(fid("f_2")))
        return [a, b] as const
      }).pipe(Effect.provide(clientOver(wire.layer)))
      assert.strictEqual(first.reason._tag, "RateLimited")
      assert.strictEqual(second.reason._tag, "RateLimited")
      assert.strictEqual(second.reason._tag === "RateLimited" ? second.reason.retryAfterMillis : 0, 3_590_000)
      assert.strictEqual(wire.sent.length, 1, "the second call was never sent")
    })
  )
})

describe("rate gate (pure)", () => {
  it("admits freely when open; holds until pausedUntil after a 429", () => {
    assert.deepStrictEqual(admit(undefined, 5), { gate: undefined, waitMs: 0 })
    const gate = closeGate(undefined, 1_000, 2_000)
    assert.strictEqual(admit(gate, 1_000).waitMs, 2_000)
    assert.strictEqual(admit(gate, 2_999).waitMs, 1)
    assert.strictEqual(admit(gate, 3_000).waitMs, 0)
  })

  it("never shortens a longer pause", () => {
    const long = closeGate(undefined, 0, 10_000)
    assert.strictEqual(closeGate(long, 1_000, 1_000).pausedUntil, 10_000)
  })

  it("ramps from RAMP_START_PER_SECOND, doubling, then opens", () => {
    let gate: RateGate | undefined = closeGate(undefined, 0, 0)
    let now = 0
    const perSecond: Array<number> = []
    while (gate !== undefined && now < 20_000) {
      const r = admit(gate, now)
      if (r.waitMs === 0) {
        const second = Math.floor(now / RAMP_DOUBLING_MS)
        perSecond[second] = (perSecond[second] ?? 0) + 1
      }
      gate = r.gate
      now += r.waitMs === 0 ? 0 : r.waitMs
    }
    assert.isUndefined(gate, "the gate opens")
    assert.strictEqual(perSecond[0], RAMP_START_PER_SECOND)
    assert.strictEqual(perSecond[1], RAMP_START_PER_SECOND * 2)
    assert.isBelow(now, 10_000)
    assert.isAbove(RAMP_OPEN_PER_SECOND, RAMP_START_PER_SECOND)
  })

  it("groups the file-state operations, and nothing else", () => {
    assert.strictEqual(rateLimitGroup("GET /files/{file}/state"), rateLimitGroup("PUT /files/{file}/state"))
    assert.notStrictEqual(rateLimitGroup("GET /files/{file}"), rateLimitGroup("POST /files/{file}/download-link"))
    assert.strictEqual(rateLimitGroup("GET /account"), "GET /account")
  })
})
