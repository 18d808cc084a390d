/** The last hour of transfer rates: one average per bucket, the oldest dropped after an hour. */
import { assert, describe, it } from "@effect/vitest"
import { makeRateHistory, RATE_BUCKET_SECONDS, RATE_BUCKETS } from "../../src/web/rateHistory.ts"

describe("rateHistory", () => {
  it("averages each bucket's readings and keeps an hour of buckets, oldest first", () => {
    const history = makeRateHistory()
    const bucketMs = RATE_BUCKET_SECONDS * 1000
    assert.isUndefined(history.add(0, 100))
    assert.isUndefined(history.add(bucketMs / 2, 300))
    assert.deepStrictEqual(history.add(bucketMs, 200), { at: bucketMs, bytesPerSecond: 200 })
    assert.deepStrictEqual(history.samples(), [{ at: bucketMs, bytesPerSecond: 200 }])

    let t = bucketMs
    for (let i = 1; i <= RATE_BUCKETS + 5; i++) {
      t += 1000
      history.add(t, i)
      t += bucketMs
      history.add(t, i)
    }
    const samples = history.samples()
    assert.lengthOf(samples, RATE_BUCKETS)
    assert.strictEqual(samples[0]?.bytesPerSecond, 6, "the oldest six are gone")
    assert.strictEqual(samples.at(-1)?.bytesPerSecond, RATE_BUCKETS + 5)
    assert.isTrue(samples.every((s, i) => i === 0 || s.at > (samples[i - 1]?.at ?? 0)))
  })
})
