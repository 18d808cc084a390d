import { assert, describe, it } from "@effect/vitest"
import { makeProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { formatBytes, formatEta, rateLimitedLine } from "../../src/transfer/progressFormat.ts"

const MiB = 1024 * 1024

describe("progress", () => {
  it("computes per-file and overall rate and ETA over a sliding window", () => {
    const t = makeProgressTracker()
    const a = t.start("a", "movies/a.mkv", 100 * MiB, 0, 0)
    const b = t.start("b", "movies/b.mkv", 10 * MiB, 5 * MiB, 0)
    t.snapshot(1_000)
    a.done += 20 * MiB
    a.fetched += 20 * MiB
    b.done += 5 * MiB
    b.fetched += 5 * MiB
    const s = t.snapshot(3_000)
    const fa = s.files.find((f) => f.fileId === "a")
    assert.strictEqual(fa?.rate, 10 * MiB)
    assert.strictEqual(fa?.eta, 8)
    assert.strictEqual(s.overall.rate, 12.5 * MiB)
    t.end(b, "completed")
    const after = t.snapshot(4_000)
    assert.strictEqual(after.overall.active, 1)
    assert.strictEqual(after.overall.completed, 1)
    assert.strictEqual(after.overall.size, 110 * MiB)
  })

  it("formats sizes, durations and a rate-limit wait for people", () => {
    assert.strictEqual(formatBytes(1536), "1.5 KiB")
    assert.strictEqual(formatEta(3725), "1:02:05")
    assert.strictEqual(formatEta(null), "--:--")
    assert.strictEqual(
      rateLimitedLine({
        _tag: "RateLimited",
        fileId: "x",
        name: "a.mkv",
        until: Date.UTC(2026, 10, 28, 5, 0, 0, 1),
        delayMs: 4_200
      }),
      "waiting for the service's rate limit: a.mkv until 2026-11-28T05:00:01Z (5 s)"
    )
  })
})
