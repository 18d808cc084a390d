import { assert, describe, it } from "@effect/vitest"
import { drainProgressLine, REQUESTS_PER_ENTRY, remainingMs } from "../../src/appstate/drainProgress.ts"

describe("drainProgress", () => {
  it("before the first write, estimates from the request budget (two requests per entry)", () => {
    const p = { total: 10_000, written: 0, elapsedMs: 0, ratePerMinute: 300, boundMs: 30_000 }
    assert.strictEqual(remainingMs(p), (10_000 * REQUESTS_PER_ENTRY * 60_000) / 300)
    assert.strictEqual(
      drainProgressLine(p),
      "writing app state: 0 of 10,000 entries, about 1h7m left; after 30s the rest stays queued for the next run"
    )
  })

  it("then from the pace seen so far, and says nothing of the bound when the rest fits in it", () => {
    const p = { total: 33, written: 19, elapsedMs: 5_000, ratePerMinute: 300, boundMs: 30_000 }
    assert.strictEqual(drainProgressLine(p), "writing app state: 19 of 33 entries, about 4s left")
  })
})
