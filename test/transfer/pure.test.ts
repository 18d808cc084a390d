import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { backoffDelay } from "../../src/pacing/backoff.ts"
import { fullBucket, take } from "../../src/pacing/tokenBucket.ts"
import { makeRateLimiter } from "../../src/transfer/Bandwidth.ts"
import { makeDirSyncer } from "../../src/transfer/dirSyncer.ts"
import {
  fromDurable,
  planSegments,
  releaseTail,
  type Segment,
  snapshotSegments,
  splitLargest,
  unreceivedBytes,
  writtenBytes
} from "../../src/transfer/segments.ts"
import { partialPathFor } from "../../src/transfer/TransferEngine.ts"
import { linkUsable } from "../../src/transfer/TransferLinks.ts"

/** Segments exactly cover [0, size) without overlap. */
const covers = (segments: ReadonlyArray<Segment>, size: number): boolean => {
  const sorted = [...segments].sort((a, b) => a.start - b.start)
  let at = 0
  for (const s of sorted) {
    if (s.start !== at || s.end < s.start) return false
    at = s.end
  }
  return at === size
}

describe("segments", () => {
  it("plans up to `count` segments, none below the minimum, covering the file", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e10 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 1e8 }),
        (size, count, min) => {
          const plan = planSegments(size, count, min)
          assert.isTrue(covers(plan, size))
          assert.isAtMost(plan.length, count)
          if (plan.length > 1) for (const s of plan) assert.isAtLeast(s.end - s.start, min)
        }
      )
    )
  })

  it("work stealing keeps the cover exact and never cuts below received bytes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1000, max: 1e9 }),
        fc.array(
          fc.tuple(fc.nat(3), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))
        ),
        (size, steps) => {
          const segments = planSegments(size, 4, 1)
          for (const [i, w, r] of steps) {
            const s = segments[i % segments.length]
            if (s === undefined) continue
            s.pos = Math.min(s.end, s.pos + Math.floor((s.end - s.pos) * w))
            s.recv = Math.min(s.end, s.pos + Math.floor((s.end - s.pos) * r))
            const before = segments.map((x) => ({ end: x.end, recv: x.recv }))
            const taken = splitLargest(segments, 100)
            assert.isTrue(covers(segments, size))
            if (taken !== undefined) {
              assert.isAtLeast(taken.end - taken.start, 50)
              for (const [k, b] of before.entries()) assert.isAtLeast(segments[k]?.end ?? 0, b.recv)
            }
          }
          assert.strictEqual(writtenBytes(segments) <= size, true)
        }
      )
    )
  })

  it("giving a segment's tail back keeps the cover exact, never empties a segment and loses no received byte", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        fc.array(fc.tuple(fc.nat(63), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean())),
        (size, steps) => {
          const segments = planSegments(size, 4, 1)
          for (const [i, w, giveBack] of steps) {
            const s = segments[i % segments.length]
            if (s === undefined) continue
            s.pos = Math.min(s.end, s.pos + Math.floor((s.end - s.pos) * w))
            s.recv = s.pos
            const unreceived = unreceivedBytes(segments)
            const tail = giveBack ? releaseTail(segments, s) : splitLargest(segments, 2)
            assert.isTrue(covers(segments, size))
            assert.strictEqual(unreceivedBytes(segments), unreceived)
            for (const x of segments) assert.isAbove(x.end, x.start)
            if (giveBack && tail !== undefined) assert.strictEqual(s.end, s.pos)
            // The journal form of any such cover resumes to the same bytes written.
            const resumed = fromDurable(snapshotSegments(segments), size)
            assert.strictEqual(writtenBytes(resumed ?? []), writtenBytes(segments))
          }
        }
      )
    )
  })

  it("a journal snapshot round-trips and merges a finished segment into the next", () => {
    const segments: Array<Segment> = [
      { start: 20, end: 30, pos: 25, recv: 27 },
      { start: 0, end: 10, pos: 10, recv: 10 },
      { start: 10, end: 20, pos: 20, recv: 20 },
      { start: 30, end: 40, pos: 31, recv: 31 }
    ]
    const snap = snapshotSegments(segments)
    assert.deepStrictEqual(snap, [
      { start: 0, end: 30, durable: 25 },
      { start: 30, end: 40, durable: 1 }
    ])
    const back = fromDurable(snap, 40)
    assert.deepStrictEqual(
      back?.map((s) => [s.start, s.end, s.pos]),
      [
        [0, 30, 25],
        [30, 40, 31]
      ]
    )
  })

  it("a journal record that does not cover the file exactly is refused", () => {
    assert.isUndefined(fromDurable([{ start: 0, end: 10, durable: 3 }], 11))
    assert.isUndefined(fromDurable([{ start: 0, end: 10, durable: 11 }], 10))
    assert.isUndefined(
      fromDurable(
        [
          { start: 0, end: 6, durable: 1 },
          { start: 5, end: 10, durable: 0 }
        ],
        10
      )
    )
    assert.isUndefined(fromDurable([], 10))
  })
})

describe("token bucket", () => {
  it("never lets more than rate × time + burst through", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 50 })), { minLength: 1 }),
        (takes) => {
          const rate = 1e6
          const burst = 5e4
          let bucket = fullBucket(burst, 0)
          let now = 0
          let total = 0
          for (const [n, gap] of takes) {
            now += gap
            const r = take(bucket, n, rate, burst, now)
            bucket = r.bucket
            total += n
            now += r.waitMs // the taker pauses as told
            assert.isAtMost(total, (rate * now) / 1000 + burst + 1)
          }
        }
      )
    )
  })

  it("hands out the full rate to a taker that reads on as soon as told (never throttles below it)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1e6 }), { minLength: 1 }), (takes) => {
        const rate = 1e6
        const burst = 5e4
        let bucket = fullBucket(burst, 0)
        let now = 0
        let total = 0
        for (const n of takes) {
          const r = take(bucket, n, rate, burst, now)
          bucket = r.bucket
          total += n
          now += r.waitMs
          // Each wait is rounded up to a whole millisecond: at most 1 ms of rate lost per take.
          assert.isAtLeast(total, (rate * (now - takes.length)) / 1000)
        }
      })
    )
  })
})

describe("backoff", () => {
  it("grows exponentially within [0, d) (full jitter), capped", () => {
    assert.strictEqual(backoffDelay(1, 0, 1000, 60_000), 0)
    assert.strictEqual(backoffDelay(1, 0.5, 1000, 60_000), 500)
    assert.isBelow(backoffDelay(1, 0.999999, 1000, 60_000), 1000)
    assert.strictEqual(backoffDelay(3, 0.5, 1000, 60_000), 2000)
    assert.strictEqual(backoffDelay(30, 0.5, 1000, 60_000), 30_000)
    assert.isBelow(backoffDelay(30, 0.999999, 1000, 60_000), 60_000)
  })
})

describe("bandwidth schedule", () => {
  // 01:00–07:00 unlimited, 22:00–00:30 at 5 B/s, else the base limit of 100 B/s.
  const schedule = [
    { start: 60, end: 420, limit: 0 },
    { start: 1320, end: 30, limit: 5 }
  ]
  const limiterAt = (minute: number) =>
    makeRateLimiter(
      { bandwidth_limit: 100, bandwidth_schedule: schedule },
      () => 0,
      () => minute
    )
  it("the limiter applies the window containing the local time, wrapping midnight, else the base limit", () => {
    assert.strictEqual(limiterAt(60).currentLimit(), 0)
    assert.strictEqual(limiterAt(60).take(1_000_000), 0)
    assert.strictEqual(limiterAt(7 * 60).currentLimit(), 100)
    assert.strictEqual(limiterAt(23 * 60).currentLimit(), 5)
    assert.strictEqual(limiterAt(10).currentLimit(), 5)
    assert.strictEqual(limiterAt(31).currentLimit(), 100)
  })
})

describe("link reuse", () => {
  it("reuses a link until shortly before it expires", () => {
    const link = { url: "https://cdn/x", expiresAt: new Date(1_000_000) }
    assert.isTrue(linkUsable(link, 0, 900_000, 30_000))
    assert.isFalse(linkUsable(link, 0, 980_000, 30_000))
    // A short-lived link keeps a quarter of its life as margin.
    const short = { url: "https://cdn/x", expiresAt: new Date(1_000_040) }
    assert.isTrue(linkUsable(short, 1_000_000, 1_000_020, 30_000))
    assert.isFalse(linkUsable(short, 1_000_000, 1_000_035, 30_000))
  })
})

describe("directory fsync group commit", () => {
  it("coalesces concurrent syncs and never reuses an fsync that started earlier", async () => {
    const started: Array<() => void> = []
    const syncer = makeDirSyncer(
      () =>
        new Promise<void>((resolve) => {
          started.push(resolve)
        })
    )
    const first = syncer.sync("/d")
    assert.strictEqual(started.length, 1)
    // Ten more renames land while the first fsync runs: they share one later fsync.
    const later = Array.from({ length: 10 }, () => syncer.sync("/d"))
    assert.strictEqual(started.length, 1)
    let laterDone = false
    void Promise.all(later).then(() => {
      laterDone = true
    })
    started[0]?.()
    await first
    await new Promise((r) => setImmediate(r))
    assert.strictEqual(started.length, 2, "the waiting callers get a fresh fsync")
    assert.isFalse(laterDone)
    started[1]?.()
    await Promise.all(later)
    assert.strictEqual(started.length, 2)
    // Once idle, a new call starts its own fsync.
    void syncer.sync("/d")
    assert.strictEqual(started.length, 3)
  })
})

describe("partial paths", () => {
  it("keep safe ids, hash the rest, and never take a name the partial folder reserves", () => {
    assert.strictEqual(partialPathFor("f_123.bin"), ".dlsync/partial/f_123.bin")
    for (const id of ["../x", "a/b", ".hidden", "x".repeat(200), "é", "landing"]) {
      const path = partialPathFor(id)
      assert.match(path, /^\.dlsync\/partial\/x-[0-9a-f]{64}$/, id)
    }
  })
})
