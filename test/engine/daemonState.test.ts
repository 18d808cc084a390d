/** The daemon's memory between steps and when a reconcile is owed (src/engine/daemonState.ts). */
import { assert, describe, it } from "@effect/vitest"
import {
  type CatchUpFacts,
  initialDaemonState,
  owesReconcile,
  RETRY_FAILED_POLLS,
  reconcileEnded,
  reconcileStarting
} from "../../src/engine/daemonState.ts"

const POLL = 60_000
const quiet = (now: number): CatchUpFacts => ({
  now,
  reason: "timer",
  storeChanged: false,
  localChanged: false,
  cleanupDueAt: null,
  pollInterval: POLL
})

describe("daemonState", () => {
  it("owes a reconcile for a changed store or root, a signal or the intake; not for a timer or a webhook alone", () => {
    const state = initialDaemonState(0)
    assert.isFalse(owesReconcile(state, quiet(1)))
    assert.isFalse(owesReconcile(state, { ...quiet(1), reason: "webhook" }))
    assert.isTrue(owesReconcile(state, { ...quiet(1), storeChanged: true }))
    assert.isTrue(owesReconcile(state, { ...quiet(1), localChanged: true }))
    assert.isTrue(owesReconcile(state, { ...quiet(1), reason: "signal" }))
    assert.isTrue(owesReconcile(state, { ...quiet(1), reason: "intake" }))
  })

  it("retries a pass that left failures after RETRY_FAILED_POLLS poll intervals, and not before", () => {
    const ended = reconcileEnded(reconcileStarting(initialDaemonState(0), 1_000), 2_000, { failures: 3, held: false })
    assert.isFalse(ended.inLine)
    assert.isFalse(owesReconcile(ended, quiet(2_000 + RETRY_FAILED_POLLS * POLL - 1)))
    assert.isTrue(owesReconcile(ended, quiet(2_000 + RETRY_FAILED_POLLS * POLL)))
    // A pass given up (no room, a full state disk) is retried the same way.
    const givenUp = reconcileEnded(ended, 9_000, null)
    assert.strictEqual(givenUp.failedAt, 9_000)
  })

  it("owes remote cleanup come due once per reconcile started before it", () => {
    const started = reconcileStarting(initialDaemonState(0), 5_000)
    assert.isTrue(owesReconcile(started, { ...quiet(10_000), cleanupDueAt: 8_000 }))
    assert.isFalse(owesReconcile(started, { ...quiet(10_000), cleanupDueAt: 4_000 }), "due before the last reconcile")
    assert.isFalse(owesReconcile(started, { ...quiet(7_000), cleanupDueAt: 8_000 }), "not yet due")
  })

  it("is in line only after a pass with no failure and no held deletion, until the next starts", () => {
    const clean = reconcileEnded(reconcileStarting(initialDaemonState(0), 1), 2, { failures: 0, held: false })
    assert.isTrue(clean.inLine)
    assert.isNull(clean.failedAt)
    assert.isFalse(reconcileEnded(clean, 3, { failures: 0, held: true }).inLine)
    assert.isFalse(reconcileStarting(clean, 4).inLine)
  })
})
