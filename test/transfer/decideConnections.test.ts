import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { type ConnectionInputs, decideConnections, MAX_RISE } from "../../src/transfer/decideConnections.ts"

const MiB = 1024 * 1024

const inputs = fc.record({
  connections: fc.integer({ min: 1, max: 64 }),
  rate: fc.double({ min: 0, max: 1e10, noNaN: true }),
  before: fc.option(
    fc.record({ connections: fc.integer({ min: 1, max: 64 }), rate: fc.double({ min: 0, max: 1e10, noNaN: true }) })
  ),
  previous: fc.option(
    fc.record({ connections: fc.integer({ min: 1, max: 64 }), rate: fc.double({ min: 0, max: 1e10, noNaN: true }) })
  ),
  free: fc.integer({ min: 0, max: 256 }),
  remaining: fc.integer({ min: 0, max: 1e12 }),
  minSegment: fc.integer({ min: 1, max: 64 * MiB }),
  stepMs: fc.integer({ min: 1, max: 10_000 }),
  firstStep: fc.integer({ min: 1, max: 16 })
})

/**
 * Drives the decision as the engine does, against a model link: each connection gets at most
 * `perConnection` bytes/s and all together at most `link`; the file's start (handshakes,
 * slow start) rises to that over its first `rampWindows` windows, window k reading
 * (k + 1) / (rampWindows + 1) of it; window k reads `noise[k]` times that (a busy CPU).
 * A step from one connection goes to 4 (transfers.segments' default).
 * Returns the counts it went through.
 */
const simulate = (o: {
  readonly start: number
  readonly perConnection: number
  readonly link: number
  readonly free: number
  readonly size: number
  readonly rampWindows?: number
  readonly noise?: ReadonlyArray<number>
}): Array<number> => {
  let connections = o.start
  let before: ConnectionInputs["before"] = null
  let previous: ConnectionInputs["previous"] = null
  let remaining = o.size
  const counts = [connections]
  for (let step = 0; step < 100 && remaining > 0; step++) {
    const ramp = o.rampWindows ?? 0
    const share = (step < ramp ? (step + 1) / (ramp + 1) : 1) * (o.noise?.[step % o.noise.length] ?? 1)
    const rate = share * Math.min(connections * o.perConnection, o.link)
    remaining = Math.max(0, remaining - rate)
    const d = decideConnections({
      connections,
      rate,
      before,
      previous,
      free: o.free - connections,
      remaining,
      minSegment: 8 * MiB,
      stepMs: 750,
      firstStep: 4
    })
    if (d._tag === "Settle") {
      connections = d.target
      counts.push(connections)
      break
    }
    before = d._tag === "Add" ? { connections, rate } : null
    previous = { connections, rate }
    if (d._tag === "Add") {
      connections += d.count
      counts.push(connections)
    }
  }
  return counts
}

describe("decideConnections", () => {
  it("never asks for more than the free permits, more than double (from one: the first step), or pieces under minSegment", () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const d = decideConnections(i)
        if (d._tag === "Add") {
          assert.isAbove(d.count, 0)
          assert.isAtMost(d.count, i.free)
          assert.isAtMost(d.count, i.connections <= 1 ? Math.max(1, i.firstStep - 1) : i.connections)
          assert.isAtMost((i.connections + d.count) * i.minSegment, i.remaining)
        }
        if (d._tag === "Settle") {
          assert.isAtLeast(d.target, 1)
          assert.isAtMost(d.target, Math.max(1, i.connections))
        }
      })
    )
  })

  it("steps only from a rate that has stopped rising, unless it judges a step that helped or starts on one", () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const d = decideConnections(i)
        const current = Math.max(1, i.connections)
        const judging = i.before !== null && i.before.connections < current && i.before.rate > 0
        const firstOnOne = current === 1 && i.previous === null
        if (d._tag === "Add" && !judging && !firstOnOne) {
          assert.isNotNull(i.previous)
          assert.strictEqual(i.previous?.connections, current)
          assert.isAtMost(i.rate, (i.previous?.rate ?? 0) * (1 + MAX_RISE))
        }
      })
    )
  })

  it("holds while the rate still rises at the count: the first window, a new count, a rise over 10 %", () => {
    const base = { connections: 4, rate: 100 * MiB, before: null, free: 12, remaining: 2048 * MiB, minSegment: 8 * MiB }
    const at = (connections: number, rateMiB: number) => ({ connections, rate: rateMiB * MiB })
    const decide = (previous: ConnectionInputs["previous"]) =>
      decideConnections({ ...base, previous, stepMs: 750, firstStep: 4 })
    assert.deepStrictEqual(decide(null), { _tag: "Hold" })
    assert.deepStrictEqual(decide(at(8, 100)), { _tag: "Hold" })
    assert.deepStrictEqual(decide(at(4, 75)), { _tag: "Hold" })
    assert.deepStrictEqual(decide(at(4, 95)), { _tag: "Add", count: 4 })
    assert.deepStrictEqual(decide(at(4, 130)), { _tag: "Add", count: 4 })
  })

  it("settles when a step did not raise the rate enough, giving the added connections back", () => {
    const base = { free: 12, remaining: 2048 * MiB, minSegment: 8 * MiB, stepMs: 750, previous: null, firstStep: 4 }
    const before = { connections: 4, rate: 100 * MiB }
    // Doubling from 4 to 8 connections of 25 MiB/s each: +100 MiB/s would be linear.
    assert.deepStrictEqual(decideConnections({ ...base, connections: 8, rate: 200 * MiB, before }), {
      _tag: "Add",
      count: 8
    })
    // Each added one brought 0.15 of what one brought before: not worth its memory.
    assert.deepStrictEqual(decideConnections({ ...base, connections: 8, rate: 115 * MiB, before }), {
      _tag: "Settle",
      target: 4
    })
    // +35 %: what windows at a steady count read apart on a busy CPU, so not a gain.
    assert.deepStrictEqual(decideConnections({ ...base, connections: 8, rate: 135 * MiB, before }), {
      _tag: "Settle",
      target: 4
    })
    assert.deepStrictEqual(decideConnections({ ...base, connections: 8, rate: 150 * MiB, before }), {
      _tag: "Add",
      count: 8
    })
    assert.deepStrictEqual(decideConnections({ ...base, connections: 8, rate: 102 * MiB, before }), {
      _tag: "Settle",
      target: 4
    })
  })

  it("holds while no permit is free or no byte came, and settles when little is left", () => {
    const base = {
      connections: 4,
      rate: 100 * MiB,
      before: null,
      previous: { connections: 4, rate: 100 * MiB },
      minSegment: 8 * MiB,
      stepMs: 750,
      firstStep: 4
    }
    assert.deepStrictEqual(decideConnections({ ...base, free: 0, remaining: 2048 * MiB }), { _tag: "Hold" })
    assert.deepStrictEqual(decideConnections({ ...base, free: 8, remaining: 2048 * MiB, rate: 0 }), { _tag: "Hold" })
    // Half a second left at 100 MiB/s, less than a step takes to judge.
    assert.deepStrictEqual(decideConnections({ ...base, free: 8, remaining: 50 * MiB }), {
      _tag: "Settle",
      target: 4
    })
    assert.deepStrictEqual(decideConnections({ ...base, free: 8, remaining: 36 * MiB, rate: 1 * MiB }), {
      _tag: "Settle",
      target: 4
    })
    assert.deepStrictEqual(decideConnections({ ...base, free: 3, remaining: 2048 * MiB }), { _tag: "Add", count: 3 })
  })

  it("on a CDN capping each connection grows to the budget; on an uncapped link ends where it started", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 8, max: 64 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 0, max: 3 }),
        (start, budget, capMiB, rampWindows) => {
          fc.pre(start <= budget)
          const capped = simulate({
            start,
            perConnection: capMiB * MiB,
            link: Number.POSITIVE_INFINITY,
            free: budget,
            size: 10_000 * capMiB * MiB,
            rampWindows
          })
          assert.strictEqual(capped.at(-1), budget, `capped: ${capped.join(" → ")}`)
          // The link, not each connection, is the limit: one probe, then back, however the
          // file's start reads.
          const uncapped = simulate({
            start,
            perConnection: 1e12,
            link: 1000 * MiB,
            free: budget,
            size: 100_000 * MiB,
            rampWindows
          })
          assert.strictEqual(uncapped.at(-1), start, `uncapped: ${uncapped.join(" → ")}`)
          assert.isAtMost(Math.max(...uncapped), 2 * start)
        }
      )
    )
  })

  it("from one connection: steps to the first step at once, judged as a doubling", () => {
    const base = { free: 15, remaining: 2048 * MiB, minSegment: 8 * MiB, stepMs: 750, firstStep: 4 }
    // The file's first window on one connection: straight to 4, no steady window awaited.
    assert.deepStrictEqual(
      decideConnections({ ...base, connections: 1, rate: 25 * MiB, before: null, previous: null }),
      {
        _tag: "Add",
        count: 3
      }
    )
    // A later window on one (after giving back) waits for a steady rate, as at any count.
    const again = { ...base, connections: 1, before: null, previous: { connections: 1, rate: 100 * MiB } }
    assert.deepStrictEqual(decideConnections({ ...again, rate: 130 * MiB }), { _tag: "Hold" })
    assert.deepStrictEqual(decideConnections({ ...again, rate: 100 * MiB }), { _tag: "Add", count: 3 })
    // 1 → 4 judged as 1 → 2 would be: +50 % keeps them (and doubles on), less goes back to one.
    const judged = { ...base, connections: 4, before: { connections: 1, rate: 100 * MiB }, previous: null }
    assert.deepStrictEqual(decideConnections({ ...judged, rate: 160 * MiB }), { _tag: "Add", count: 4 })
    assert.deepStrictEqual(decideConnections({ ...judged, rate: 140 * MiB }), { _tag: "Settle", target: 1 })
    // Fewer permits than the step: what is free.
    assert.deepStrictEqual(
      decideConnections({ ...base, free: 2, connections: 1, rate: 25 * MiB, before: null, previous: null }),
      { _tag: "Add", count: 2 }
    )
  })

  it("from one connection: a capped CDN grows to the budget; an uncapped link probes once and returns to one", () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 64 }), fc.integer({ min: 1, max: 100 }), (budget, capMiB) => {
        const capped = simulate({
          start: 1,
          perConnection: capMiB * MiB,
          link: Number.POSITIVE_INFINITY,
          free: budget,
          size: 10_000 * capMiB * MiB
        })
        assert.strictEqual(capped.at(-1), budget, `capped: ${capped.join(" → ")}`)
        assert.strictEqual(capped[1], 4, `capped: ${capped.join(" → ")}`)
      })
    )
    assert.deepStrictEqual(
      simulate({ start: 1, perConnection: 1e12, link: 1000 * MiB, free: 16, size: 100_000 * MiB }),
      [1, 4, 1]
    )
    // A start that reads half low credits the step: the file keeps the 4 every file started
    // with before, after one probe at 8; never more.
    assert.deepStrictEqual(
      simulate({ start: 1, perConnection: 1e12, link: 1000 * MiB, free: 16, size: 100_000 * MiB, rampWindows: 1 }),
      [1, 4, 8, 4]
    )
  })

  it("on an uncapped link whose windows read ±15 % apart, ends where it started", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.double({ min: 0.85, max: 1.15, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (start, noise) => {
          const counts = simulate({ start, perConnection: 1e12, link: 600 * MiB, free: 16, size: 100_000 * MiB, noise })
          assert.strictEqual(counts.at(-1), start, counts.join(" → "))
        }
      )
    )
  })

  it("stops where the link's own limit is reached behind a per-connection cap", () => {
    // 25 MiB/s per connection behind a 300 MiB/s link: 4 → 8 → 16 (+100 MiB/s where 200 would be
    // linear: half, still worth it) → 32 (nothing more): back to 16.
    const counts = simulate({ start: 4, perConnection: 25 * MiB, link: 300 * MiB, free: 64, size: 1e6 * MiB })
    assert.deepStrictEqual(counts, [4, 8, 16, 32, 16])
  })
})
