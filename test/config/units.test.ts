import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import * as fc from "fast-check"
import { limitAt, minutesUntilChange } from "../../src/config/bandwidthSchedule.ts"
import {
  BandwidthSchedule,
  formatDuration,
  formatRate,
  formatSize,
  formatWindow,
  HumanMillis,
  HumanRate,
  HumanSize,
  parseDuration,
  parseRate,
  parseSchedule,
  parseSize
} from "../../src/config/units.ts"

const ok = <A>(r: Result.Result<A, string>): A => {
  if (Result.isFailure(r)) assert.fail(`expected success, got failure: ${r.failure}`)
  return r.success
}
const err = <A>(r: Result.Result<A, string>): string => {
  if (Result.isSuccess(r)) assert.fail(`expected failure, got ${JSON.stringify(r.success)}`)
  return r.failure
}

const KiB = 1024
const MiB = 1024 ** 2
const GiB = 1024 ** 3
const hm = (h: number, m = 0) => h * 60 + m

describe("parseDuration", () => {
  it("reads single and compound durations in milliseconds", () => {
    const cases: ReadonlyArray<readonly [unknown, number]> = [
      ["30s", 30_000],
      ["5m", 300_000],
      ["1h30m", 5_400_000],
      ["1h 30m", 5_400_000],
      ["2d", 172_800_000],
      ["250ms", 250],
      ["1w", 604_800_000],
      ["1.5h", 5_400_000],
      ["0.5s", 500],
      ["5 minutes", 300_000],
      ["250 millis", 250],
      ["1 hour 2 minutes 3 seconds", 3_723_000],
      ["  10S ", 10_000],
      ["1H30M", 5_400_000],
      ["0", 0],
      [0, 0],
      ["0s", 0]
    ]
    for (const [input, millis] of cases) assert.strictEqual(ok(parseDuration(input)), millis, String(input))
  })

  it("refuses a bare number, saying a unit is needed", () => {
    assert.include(err(parseDuration("30")), 'write "30s" or "30m"')
    assert.include(err(parseDuration(60)), "a bare number has no unit")
  })

  it("refuses hostile and malformed input with a message naming what was expected", () => {
    const hostile: ReadonlyArray<unknown> = [
      "",
      "   ",
      "-5s",
      "- 5s",
      "5",
      "s",
      "5x",
      "5 parsecs",
      "1e3s",
      "0x10s",
      "NaN",
      "Infinity",
      "5s5s",
      "30m1h",
      "1m30m",
      "1h-30m",
      "1h,30m",
      "٣s",
      "５s",
      "5s\u0000",
      "0.5ms",
      ".5s",
      "5.s",
      "9".repeat(40) + "w",
      "x".repeat(10_000),
      null,
      true,
      {},
      [],
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY
    ]
    for (const input of hostile) {
      const message = err(parseDuration(input))
      assert.include(message, "expected a duration", String(input))
    }
    assert.include(err(parseDuration("-5s")), "negative")
    assert.include(err(parseDuration("5 parsecs")), '"parsecs" is not a unit')
    assert.include(err(parseDuration("30m1h")), "largest first")
    assert.include(err(parseDuration("0.5ms")), "whole milliseconds")
    assert.include(err(parseDuration(`${"9".repeat(40)}w`)), "at most")
    assert.notInclude(err(parseDuration("x".repeat(10_000))), "xxxxxxxxxx")
  })

  it("accepts the largest safe duration and refuses one millisecond more", () => {
    assert.strictEqual(ok(parseDuration(`${Number.MAX_SAFE_INTEGER}ms`)), Number.MAX_SAFE_INTEGER)
    assert.include(err(parseDuration(`${BigInt(Number.MAX_SAFE_INTEGER) + 1n}ms`)), "at most")
  })

  it("formats back to the compact form, and the form parses to the same value", () => {
    for (const millis of [0, 250, 30_000, 5_400_000, 172_800_000 + 1, 3_723_000]) {
      assert.strictEqual(ok(parseDuration(formatDuration(millis))), millis)
    }
    assert.strictEqual(formatDuration(5_400_000), "1h30m")
  })
})

describe("parseSize", () => {
  it("reads IEC and SI units, case-insensitively, into whole bytes", () => {
    const cases: ReadonlyArray<readonly [unknown, number]> = [
      ["1 GiB", GiB],
      ["512MiB", 512 * MiB],
      ["1.5 GB", 1_500_000_000],
      ["1.5 GiB", 1.5 * GiB],
      ["0", 0],
      [0, 0],
      [4096, 4096],
      ["4096", 4096],
      ["10 B", 10],
      ["10 bytes", 10],
      ["1 kB", 1000],
      ["1 KB", 1000],
      ["1 kib", 1024],
      ["1 KIB", 1024],
      ["2 TiB", 2 * 1024 ** 4],
      ["3 tb", 3e12],
      ["1.1 MiB", 1_153_433],
      [" 1 GiB ", GiB]
    ]
    for (const [input, bytes] of cases) assert.strictEqual(ok(parseSize(input)), bytes, String(input))
  })

  it("refuses single-letter units as ambiguous, naming both readings", () => {
    const message = err(parseSize("1G"))
    assert.include(message, "GiB")
    assert.include(message, "GB")
    assert.include(message, "ambiguous")
  })

  it("refuses negatives, NaN, fractions of a byte and anything beyond 2^53 - 1 bytes", () => {
    const hostile: ReadonlyArray<unknown> = [
      "-1 GiB",
      "-0",
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.MAX_SAFE_INTEGER + 1,
      "NaN",
      "Infinity",
      "1e9",
      "0x100",
      "1.5",
      "1.5 B",
      "1 GiBB",
      "1 Gibibyte",
      "GiB",
      "1 GiB 2 MiB",
      "1,5 GB",
      "9 PiB",
      "8192 TiB",
      "٣ GiB",
      "",
      null,
      true,
      ["1 GiB"],
      { size: 1 },
      "9".repeat(100)
    ]
    for (const input of hostile) assert.include(err(parseSize(input)), "expected a size", String(input))
    assert.include(err(parseSize("-1 GiB")), "negative")
    assert.include(err(parseSize("9 PiB")), "less than 8 PiB")
    assert.include(err(parseSize("8 PiB")), "less than 8 PiB")
    assert.strictEqual(ok(parseSize(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER)
    assert.strictEqual(ok(parseSize("7 PiB")), 7 * 1024 ** 5)
  })

  it("formats with the largest exact IEC unit, and the form parses back", () => {
    for (const bytes of [0, 1, 1000, KiB, 1536 * KiB, GiB, 5 * 1024 ** 4]) {
      assert.strictEqual(ok(parseSize(formatSize(bytes))), bytes)
    }
    assert.strictEqual(formatSize(GiB), "1 GiB")
    assert.strictEqual(formatSize(1000), "1000 B")
  })
})

describe("parseRate", () => {
  it("reads per-second sizes, with or without /s, and 0 or unlimited as no limit", () => {
    assert.strictEqual(ok(parseRate("20 MiB/s")), 20 * MiB)
    assert.strictEqual(ok(parseRate("20MiB/s")), 20 * MiB)
    assert.strictEqual(ok(parseRate("20 MiB / sec")), 20 * MiB)
    assert.strictEqual(ok(parseRate("500 kB/s")), 500_000)
    assert.strictEqual(ok(parseRate("20 MiB")), 20 * MiB)
    assert.strictEqual(ok(parseRate("0")), 0)
    assert.strictEqual(ok(parseRate(0)), 0)
    assert.strictEqual(ok(parseRate("Unlimited")), 0)
    assert.strictEqual(ok(parseRate(1_000_000)), 1_000_000)
  })

  it("refuses hostile rates", () => {
    for (const input of ["-5 MiB/s", "5 MiB/h", "5 MiB/s/s", "fast", "5M/s", "/s", "1e6/s", -1, Number.NaN, null]) {
      assert.include(err(parseRate(input)), "expected a rate", String(input))
    }
    assert.strictEqual(formatRate(0), "unlimited")
    assert.strictEqual(formatRate(5 * MiB), "5 MiB/s")
  })
})

describe("parseSchedule", () => {
  it("reads windows from strings, tables and one ';'-separated string alike", () => {
    const expected = [
      { start: hm(1), end: hm(7), limit: 0 },
      { start: hm(7), end: hm(1), limit: 5 * MiB }
    ]
    assert.deepStrictEqual(ok(parseSchedule(["01:00-07:00 unlimited", "07:00-01:00 5 MiB/s"])), expected)
    assert.deepStrictEqual(
      ok(
        parseSchedule([
          { from: "01:00", to: "07:00", limit: "unlimited" },
          { from: "07:00", to: "01:00", limit: "5 MiB/s" }
        ])
      ),
      expected
    )
    assert.deepStrictEqual(ok(parseSchedule("01:00-07:00 unlimited; 07:00 – 01:00 5 MiB/s")), expected)
    assert.deepStrictEqual(ok(parseSchedule([])), [])
    assert.deepStrictEqual(ok(parseSchedule(["00:00-24:00 1 MiB/s"])), [{ start: 0, end: hm(24), limit: MiB }])
    assert.deepStrictEqual(ok(parseSchedule(["22:00-00:00 1 MiB/s"])), [{ start: hm(22), end: hm(24), limit: MiB }])
  })

  it("refuses overlapping windows, naming both entries and the overlap", () => {
    const message = err(parseSchedule(["01:00-07:00 unlimited", "06:00-08:00 1 MiB/s"]))
    assert.include(message, 'entry 1 ("01:00-07:00 unlimited")')
    assert.include(message, 'entry 2 ("06:00-08:00 1 MiB/s")')
    assert.include(message, "overlap from 06:00 to 07:00")
    // Overlaps across midnight are found too.
    assert.include(err(parseSchedule(["22:00-02:00 1 MiB/s", "01:00-03:00 2 MiB/s"])), "overlap from 01:00 to 02:00")
    assert.include(err(parseSchedule(["00:00-24:00 1 MiB/s", "12:00-12:30 0"])), "overlap from 12:00 to 12:30")
    // Touching windows do not overlap.
    ok(parseSchedule(["01:00-07:00 0", "07:00-01:00 1 MiB/s"]))
  })

  it("reports every bad entry with its position and what was expected", () => {
    const message = err(
      parseSchedule(["25:00-07:00 0", "07:00-07:00 1 MiB/s", "07:00-08:00", "08:00-09:00 fast", 42, ["x"]])
    )
    assert.include(message, 'entry 1 ("25:00-07:00 0"): "25:00" is not a time of day')
    assert.include(message, "entry 2")
    assert.include(message, "empty")
    assert.include(message, "entry 3")
    assert.include(message, 'entry 4 ("08:00-09:00 fast"): expected a rate')
    assert.include(message, "entry 5 (42)")
    assert.include(message, "entry 6 (a list)")
  })

  it("refuses unknown keys in the table form and other hostile input", () => {
    assert.include(err(parseSchedule([{ from: "01:00", to: "02:00", limit: 0, speed: 1 }])), 'unknown key "speed"')
    assert.include(err(parseSchedule([{ from: "1am", to: "02:00", limit: 0 }])), '"1am" is not a time of day')
    assert.include(err(parseSchedule([{ from: 1, to: 2, limit: 0 }])), "must be a time of day")
    assert.include(err(parseSchedule(42)), "expected a list of windows")
    assert.include(err(parseSchedule(Array.from({ length: 100 }, () => "01:00-02:00 0"))), "at most 48 windows")
    assert.include(err(parseSchedule(["24:00-01:00 0"])), '"24:00" is not a time of day')
    assert.include(err(parseSchedule(["01:60-02:00 0"])), '"01:60"')
  })

  it("limitAt gives the window in force at a local minute, else the base limit", () => {
    const schedule = ok(parseSchedule(["01:00-07:00 unlimited", "18:00-23:00 2 MiB/s", "23:30-00:30 3 MiB/s"]))
    const base = 10 * MiB
    assert.strictEqual(limitAt(schedule, base, hm(0, 59)), base)
    assert.strictEqual(limitAt(schedule, base, hm(1)), 0)
    assert.strictEqual(limitAt(schedule, base, hm(6, 59)), 0)
    assert.strictEqual(limitAt(schedule, base, hm(7)), base)
    assert.strictEqual(limitAt(schedule, base, hm(18)), 2 * MiB)
    assert.strictEqual(limitAt(schedule, base, hm(23)), base)
    assert.strictEqual(limitAt(schedule, base, hm(23, 45)), 3 * MiB)
    assert.strictEqual(limitAt(schedule, base, hm(0, 15)), 3 * MiB)
    assert.strictEqual(limitAt(schedule, base, hm(0, 30)), base)
    assert.strictEqual(limitAt([], base, hm(12)), base)
  })

  it("minutesUntilChange gives the distance to the next window edge", () => {
    const schedule = ok(parseSchedule(["01:00-07:00 unlimited", "23:00-00:30 1 MiB/s"]))
    assert.strictEqual(minutesUntilChange(schedule, hm(0)), 30)
    assert.strictEqual(minutesUntilChange(schedule, hm(0, 30)), 30)
    assert.strictEqual(minutesUntilChange(schedule, hm(1)), 6 * 60)
    assert.strictEqual(minutesUntilChange(schedule, hm(12)), 11 * 60)
    assert.strictEqual(minutesUntilChange(ok(parseSchedule(["00:00-24:00 1 MiB/s"])), hm(5)), 19 * 60)
    assert.strictEqual(minutesUntilChange([], hm(5)), undefined)
  })
})

describe("schemas", () => {
  it.effect("decode human text and encode back to the readable form", () =>
    Effect.gen(function* () {
      const millis = yield* Schema.decodeUnknownEffect(HumanMillis)("1h30m")
      assert.strictEqual(millis, 5_400_000)
      assert.strictEqual(yield* Schema.encodeEffect(HumanMillis)(millis), "1h30m")
      assert.strictEqual(yield* Schema.decodeUnknownEffect(HumanSize)("1 GiB"), GiB)
      assert.strictEqual(yield* Schema.encodeEffect(HumanSize)(GiB), "1 GiB")
      assert.strictEqual(yield* Schema.decodeUnknownEffect(HumanRate)("unlimited"), 0)
      assert.strictEqual(yield* Schema.encodeEffect(HumanRate)(20 * MiB), "20 MiB/s")
      const schedule = yield* Schema.decodeUnknownEffect(BandwidthSchedule)(["07:00-01:00 5 MiB/s"])
      assert.deepStrictEqual(yield* Schema.encodeEffect(BandwidthSchedule)(schedule), ["07:00-01:00 5 MiB/s"])
    })
  )

  it.effect("fail with the parser's message, located at the key, inside a struct", () =>
    Effect.gen(function* () {
      const Section = Schema.Struct({ poll_interval: HumanMillis, min_free_space: HumanSize })
      const error = yield* Effect.flip(
        Schema.decodeUnknownEffect(Section)({ poll_interval: "soon", min_free_space: "1 GiB" })
      )
      assert.include(error.message, "poll_interval")
      assert.include(error.message, 'expected a duration such as "30s"')
      assert.include(error.message, 'got "soon"')
    })
  )
})

describe("properties", () => {
  it("every safe byte count and duration survives format → parse", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        assert.strictEqual(ok(parseSize(formatSize(n))), n)
        assert.strictEqual(ok(parseRate(formatRate(n))), n)
        assert.strictEqual(ok(parseDuration(formatDuration(n))), n)
      })
    )
  })

  it("a schedule either overlaps somewhere or limitAt agrees with a minute-by-minute reading", () => {
    const window = fc.record({
      start: fc.integer({ min: 0, max: 1439 }),
      // A whole day is only 00:00-24:00 (a unit test covers it): other windows are shorter.
      length: fc.integer({ min: 1, max: 1439 }),
      limit: fc.integer({ min: 0, max: 1_000_000 })
    })
    fc.assert(
      fc.property(fc.array(window, { maxLength: 4 }), (drawn) => {
        const windows = drawn.map(({ start, length, limit }) => ({
          start,
          end: ((start + length - 1) % 1440) + 1,
          limit
        }))
        // Minute by minute: which windows cover each minute.
        const cover = Array.from({ length: 1440 }, (_, minute) =>
          windows.filter((w) =>
            w.end > w.start ? minute >= w.start && minute < w.end : minute >= w.start || minute < w.end
          )
        )
        const parsed = parseSchedule(windows.map(formatWindow))
        if (cover.some((c) => c.length > 1)) {
          assert.include(err(parsed), "overlap")
          return
        }
        const schedule = ok(parsed)
        for (let minute = 0; minute < 1440; minute += 7) {
          assert.strictEqual(limitAt(schedule, -1, minute), cover[minute]![0]?.limit ?? -1)
        }
      })
    )
  })
})
