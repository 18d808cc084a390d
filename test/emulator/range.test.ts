import { assert, describe, it } from "vitest"
import { ifRangeHolds, noneMatch, parseRange } from "../../src/emulator/range.ts"

describe("parseRange", () => {
  it("reads single byte ranges, clamps the end, and serves suffixes", () => {
    assert.deepStrictEqual(parseRange("bytes=0-9", 100), { kind: "partial", start: 0, end: 9 })
    assert.deepStrictEqual(parseRange("bytes=90-", 100), { kind: "partial", start: 90, end: 99 })
    assert.deepStrictEqual(parseRange("bytes=90-500", 100), { kind: "partial", start: 90, end: 99 })
    assert.deepStrictEqual(parseRange("bytes=-10", 100), { kind: "partial", start: 90, end: 99 })
    assert.deepStrictEqual(parseRange("bytes=-500", 100), { kind: "partial", start: 0, end: 99 })
  })

  it("is unsatisfiable past the end, for an empty suffix and for empty files", () => {
    for (const [header, size] of [
      ["bytes=100-", 100],
      ["bytes=100-200", 100],
      ["bytes=-0", 100],
      ["bytes=0-", 0]
    ] as const) {
      assert.deepStrictEqual(parseRange(header, size), { kind: "unsatisfiable" }, header)
    }
  })

  it("ignores what it does not serve: other units, several ranges, bad syntax, reversed ranges", () => {
    for (const header of [undefined, "items=0-1", "bytes=0-1,5-6", "bytes=a-b", "bytes=-", "bytes=9-3"]) {
      assert.deepStrictEqual(parseRange(header, 100), { kind: "full" }, String(header))
    }
  })
})

describe("validators", () => {
  const etag = '"abc"'
  const date = "Sun, 22 Nov 2026 04:00:00 GMT"
  it("If-Range holds for the same strong tag or the same date only", () => {
    assert.isTrue(ifRangeHolds(undefined, etag, date))
    assert.isTrue(ifRangeHolds(etag, etag, date))
    assert.isFalse(ifRangeHolds('"other"', etag, date))
    assert.isFalse(ifRangeHolds('W/"abc"', etag, date))
    assert.isTrue(ifRangeHolds(date, etag, date))
    assert.isFalse(ifRangeHolds("Sun, 22 Nov 2026 04:00:01 GMT", etag, date))
  })

  it("If-None-Match uses the weak comparison and understands lists and *", () => {
    assert.isTrue(noneMatch('W/"abc"', etag))
    assert.isTrue(noneMatch('"x", "abc"', etag))
    assert.isTrue(noneMatch("*", etag))
    assert.isFalse(noneMatch('"x"', etag))
    assert.isFalse(noneMatch(undefined, etag))
  })
})
