import { afterEach, assert, describe, it, vi } from "@effect/vitest"
import { LeanPool } from "../../src/transfer/leanPool.ts"

describe("LeanPool buffers", () => {
  afterEach(() => void vi.useRealTimers())

  it("reuses given-back buffers while transfers run, and lets them go after 15 s without a take", () => {
    vi.useFakeTimers()
    const pool = new LeanPool(64 * 1024)
    const a = pool.takeBuffer()
    const b = pool.takeBuffer()
    assert.strictEqual(pool.allocated, 2)
    pool.giveBuffer(a)
    vi.advanceTimersByTime(14_000)
    assert.strictEqual(pool.takeBuffer(), a, "a buffer given back is taken again")
    pool.giveBuffer(a)
    pool.giveBuffer(b)
    vi.advanceTimersByTime(14_000)
    // Still kept: each give-back restarts the wait.
    assert.strictEqual(pool.takeBuffer(), b)
    pool.giveBuffer(b)
    vi.advanceTimersByTime(15_000)
    const fresh = pool.takeBuffer()
    assert.notStrictEqual(fresh, a)
    assert.notStrictEqual(fresh, b)
    assert.strictEqual(pool.allocated, 3)
    pool.close()
  })
})
