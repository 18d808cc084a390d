/** The pure parts of the app-state writer: merge (properties), coalescing, and the request budget. */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { Json } from "../../src/api/schemas/common.ts"
import { due, emptyCoalescer, nextDueAt, offer } from "../../src/appstate/coalesce.ts"
import { mergeProgress, STATE_VALUE_LIMIT_BYTES } from "../../src/appstate/mergeProgress.ts"
import { PROGRESS_STATES, type ProgressEntry, progressEntry } from "../../src/appstate/ProgressEntry.ts"
import {
  acquire,
  burstOf,
  DEFAULT_RETRY_AFTER_MS,
  makeBudget,
  REDUCED_FOR_MS,
  type RequestBudget,
  rateLimited
} from "../../src/appstate/requestBudget.ts"

const json: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)))
const object = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 6 })
const deviceId = fc.uuid()
const entry: fc.Arbitrary<ProgressEntry> = fc
  .record({
    state: fc.constantFrom(...PROGRESS_STATES),
    bytes: fc.nat(),
    size: fc.nat(),
    path: fc.string({ maxLength: 40 }),
    updatedAtMs: fc.integer({ min: 0, max: 4_000_000_000_000 }),
    error: fc.option(fc.string({ maxLength: 20 }), { nil: undefined })
  })
  .map(progressEntry)
/** A current value that may already hold a `dlsync` section with other devices (or garbage). */
const current = fc.option(
  fc
    .record({
      base: object,
      section: fc.oneof(fc.dictionary(fc.uuid(), json, { maxKeys: 4 }), json)
    })
    .map(({ base, section }) => ({ ...base, dlsync: section })),
  { nil: null }
)

const written = (r: ReturnType<typeof mergeProgress>) => {
  if (r._tag !== "Write") throw new Error(`expected a write, got ${r._tag}`)
  return r.value
}

const sectionOf = (v: Readonly<Record<string, Json>> | null): Record<string, Json> => {
  const s = v?.dlsync
  return s === null || s === undefined || typeof s !== "object" || Array.isArray(s)
    ? {}
    : Object.fromEntries(Object.entries(s))
}

describe("mergeProgress", () => {
  it("keeps every other top-level key and every other device's entry, and sets ours", () =>
    fc.assert(
      fc.property(current, deviceId, entry, (value, id, e) => {
        const mine = sectionOf(value)[id]
        const r = mergeProgress(value, id, e)
        if (r._tag !== "Write") return // Unchanged: ours already equal or newer
        for (const [k, v] of Object.entries(value ?? {})) if (k !== "dlsync") assert.deepStrictEqual(r.value[k], v)
        const before = sectionOf(value)
        const after = sectionOf(r.value)
        for (const [k, v] of Object.entries(before)) if (k !== id) assert.deepStrictEqual(after[k], v)
        assert.deepStrictEqual(after[id], { ...e })
        assert.isTrue(mine === undefined || JSON.stringify(mine) !== JSON.stringify(e))
      })
    ))

  it("is idempotent", () =>
    fc.assert(
      fc.property(current, deviceId, entry, (value, id, e) => {
        const r = mergeProgress(value, id, e)
        if (r._tag === "Write") assert.strictEqual(mergeProgress(r.value, id, e)._tag, "Unchanged")
      })
    ))

  it("two devices' entries commute", () =>
    fc.assert(
      fc.property(object, deviceId, deviceId, entry, entry, (value, a, b, ea, eb) => {
        fc.pre(a !== b)
        const ab = written(mergeProgress(written(mergeProgress(value, a, ea)), b, eb))
        const ba = written(mergeProgress(written(mergeProgress(value, b, eb)), a, ea))
        assert.deepStrictEqual(ab, ba)
      })
    ))

  it("never rolls this device's entry back to an older one", () => {
    const newer = progressEntry({ state: "complete", bytes: 10, size: 10, path: "a", updatedAtMs: 2_000 })
    const older = progressEntry({ state: "downloading", bytes: 5, size: 10, path: "a", updatedAtMs: 1_000 })
    const value = written(mergeProgress(null, "dev", newer))
    assert.strictEqual(mergeProgress(value, "dev", older)._tag, "Unchanged")
  })

  it("refuses to grow a value beyond the service's 64 KiB", () => {
    const big = { other: "x".repeat(STATE_VALUE_LIMIT_BYTES - 50) }
    const e = progressEntry({ state: "complete", bytes: 1, size: 1, path: "some/long/path.mkv", updatedAtMs: 0 })
    assert.strictEqual(mergeProgress(big, "dev", e)._tag, "TooLarge")
  })

  it("caps long paths and errors so entries stay small", () => {
    const e = progressEntry({
      state: "failed",
      bytes: 0,
      size: 1,
      path: "p/".repeat(1000),
      updatedAtMs: 0,
      error: "e".repeat(5000)
    })
    assert.isAtMost(JSON.stringify(e).length, 1000)
  })
})

const at = (state: ProgressEntry["state"], bytes: number, ms: number) =>
  progressEntry({ state, bytes, size: 100, path: "f", updatedAtMs: ms })

describe("coalesce", () => {
  it("emits transitions at once and at most one downloading entry per interval, latest wins", () => {
    let table = emptyCoalescer<string>()
    const emitted: Array<string> = []
    const push = (e: ProgressEntry, now: number) => {
      const r = offer(table, "f", e, now, 30_000)
      table = r.table
      if (r.emit) emitted.push(`${r.emit.state}:${r.emit.bytes}`)
    }
    push(at("queued", 0, 0), 0)
    push(at("downloading", 1, 1), 1)
    push(at("downloading", 2, 2), 1_000)
    push(at("downloading", 3, 3), 20_000)
    assert.deepStrictEqual(emitted, ["queued:0", "downloading:1"])
    assert.strictEqual(nextDueAt(table, 30_000), 30_001)
    assert.deepStrictEqual(due(table, 30_000, 30_000).emit, [])
    const d = due(table, 30_001, 30_000)
    assert.deepStrictEqual(
      d.emit.map(([, e]) => e.bytes),
      [3]
    )
    table = d.table
    push(at("downloading", 4, 4), 31_000)
    push(at("complete", 100, 5), 31_001)
    assert.deepStrictEqual(emitted, ["queued:0", "downloading:1", "complete:100"])
    assert.strictEqual(table.size, 0)
  })

  it("never emits more than one same-state entry per interval per file (property)", () =>
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }), (gaps) => {
        let table = emptyCoalescer<string>()
        let now = 0
        const times: Array<number> = []
        for (const gap of gaps) {
          now += gap
          const flushed = due(table, now, 10_000)
          table = flushed.table
          for (const _ of flushed.emit) times.push(now)
          const r = offer(table, "f", at("downloading", now, now), now, 10_000)
          table = r.table
          if (r.emit) times.push(now)
        }
        for (let i = 1; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - 1]!, 10_000)
      })
    ))
})

describe("request budget", () => {
  const run = (budget: RequestBudget, from: number, to: number, max: number) => {
    let b = budget
    let sent = 0
    for (let now = from; now < to; now += 50) {
      for (;;) {
        const r = acquire(b, now, max)
        b = r.budget
        if (r.waitMs > 0) break
        sent++
      }
    }
    return { budget: b, sent }
  }

  it("keeps a greedy sender at the configured rate (plus one burst)", () => {
    const { sent } = run(makeBudget(300, 0), 0, 60_000, 300)
    assert.isAtMost(sent, 300 + burstOf(300))
    assert.isAtLeast(sent, 295)
  })

  it("a 429 pauses for Retry-After, halves the rate for a while, then restores it", () => {
    const limited = rateLimited(makeBudget(300, 0), 0, 2_000)
    assert.strictEqual(acquire(limited, 1_000, 300).waitMs, 1_000)
    const halved = run(limited, 2_000, 62_000, 300)
    assert.isAtMost(halved.sent, 150 + 1)
    assert.isAtLeast(halved.sent, 140)
    const restored = run(halved.budget, REDUCED_FOR_MS, REDUCED_FOR_MS + 60_000, 300)
    assert.isAtLeast(restored.sent, 290)
    assert.strictEqual(rateLimited(limited, 0, undefined).pausedUntil, DEFAULT_RETRY_AFTER_MS)
    assert.strictEqual(rateLimited(limited, 0, undefined).ratePerMinute, 75)
  })
})
