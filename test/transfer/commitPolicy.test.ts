import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { commitDue, commitThreshold, NEAR_END_FLOOR } from "../../src/transfer/commitPolicy.ts"

/**
 * A download of `size` bytes written in `writes`-sized pieces (cycled), with a committer
 * that flushes at once whenever the policy says so: how many flushes, and what is left
 * unsynced for the finalize's fsync.
 */
const simulate = (size: number, batch: number, writes: ReadonlyArray<number>) => {
  let toArrive = size
  let unsynced = 0
  let flushes = 0
  for (let i = 0; toArrive > 0; i++) {
    const n = Math.min(toArrive, writes[i % writes.length] ?? 1)
    toArrive -= n
    unsynced += n
    if (commitDue(unsynced, toArrive, batch)) {
      flushes++
      unsynced = 0
    }
  }
  return { flushes, leftForFsync: unsynced }
}

const MiB = 1024 * 1024

describe("commit policy", () => {
  it("far from the end of the file, a flush is due at a whole batch, as before", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 0, max: 1e10 }),
        fc.integer({ min: 1, max: 1e9 }),
        (batch, unsynced, beyond) => {
          assert.strictEqual(commitDue(unsynced, batch + beyond - 1, batch), unsynced >= batch && unsynced > 0)
        }
      )
    )
  })

  it("the finalize's fsync finds less than the near-end floor when flushes keep up, for about three flushes more", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4e9 }),
        fc.integer({ min: 8, max: 256 * MiB }),
        fc.array(fc.integer({ min: 1, max: 4 * MiB }), { minLength: 1, maxLength: 8 }),
        (size, batch, writes) => {
          fc.pre(size / Math.min(...writes) < 50_000)
          const { flushes, leftForFsync } = simulate(size, batch, writes)
          assert.isBelow(leftForFsync, Math.max(1, Math.ceil(batch * NEAR_END_FLOOR)))
          // Whole batches, plus the halving flushes of the last one (log2 of 1 / NEAR_END_FLOOR).
          assert.isAtMost(flushes, Math.floor(size / batch) + 4)
        }
      )
    )
  })

  it("a file of 2 GiB in 1 MiB writes: 32 batch flushes and 3 near-end ones; the fsync finds nothing", () => {
    const { flushes, leftForFsync } = simulate(2048 * MiB, 64 * MiB, [MiB])
    assert.deepStrictEqual({ flushes, leftForFsync }, { flushes: 35, leftForFsync: 0 })
  })

  it("within the last batch the threshold is what is still to come, never below the floor", () => {
    assert.strictEqual(commitThreshold(1000 * MiB, 64 * MiB), 64 * MiB)
    assert.strictEqual(commitThreshold(40 * MiB, 64 * MiB), 40 * MiB)
    assert.strictEqual(commitThreshold(MiB, 64 * MiB), 8 * MiB)
    assert.strictEqual(commitThreshold(0, 64 * MiB), 8 * MiB)
    assert.isFalse(commitDue(0, 0, 64 * MiB), "nothing to flush")
  })
})
