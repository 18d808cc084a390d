/** The byte path's idle watchdog, on a clock the test moves (no real time passes). */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import type { Timer, Timers } from "../../src/pacing/systemClock.ts"
import { IdleWatchdog } from "../../src/transfer/idleWatchdog.ts"

/** Timers on a clock that only `advance` moves. */
const manualTimers = () => {
  let now = 0
  const armed = new Set<{ at: number; readonly ms: number; readonly fire: () => void }>()
  const timers: Timers & { advance: (ms: number) => void; armed: () => number } = {
    after: (ms, fire): Timer => {
      const t = { at: now + ms, ms, fire }
      armed.add(t)
      return {
        cancel: () => void armed.delete(t),
        restart: () => {
          t.at = now + ms
          armed.add(t)
        }
      }
    },
    advance: (ms) => {
      const until = now + ms
      while (true) {
        const next = [...armed].filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0]
        if (next === undefined) break
        now = next.at
        armed.delete(next)
        next.fire()
      }
      now = until
    },
    armed: () => armed.size
  }
  return timers
}

const TIMEOUT = 1000

describe("IdleWatchdog", () => {
  it("never fires while the response keeps moving more often than the timeout", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: TIMEOUT - 1 }), { maxLength: 60 }), (gaps) => {
        const timers = manualTimers()
        let stalls = 0
        const watchdog = new IdleWatchdog(TIMEOUT, () => stalls++, timers)
        watchdog.moved()
        for (const gap of gaps) {
          timers.advance(gap)
          watchdog.moved()
        }
        assert.strictEqual(stalls, 0)
      })
    )
  })

  it("fires once, between the timeout and a quarter more after the last move", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: TIMEOUT - 1 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 50 }),
        (gaps, step) => {
          const timers = manualTimers()
          let firedAt: number | null = null
          let stalls = 0
          let clock = 0
          const watchdog = new IdleWatchdog(
            TIMEOUT,
            () => {
              stalls++
              firedAt = clock
            },
            timers
          )
          watchdog.moved()
          for (const gap of gaps) {
            timers.advance(gap)
            clock += gap
            watchdog.moved()
          }
          const lastMove = clock
          // Time moves on in small steps, with no move of the response.
          for (let t = 0; t < 3 * TIMEOUT; t += step) {
            timers.advance(step)
            clock += step
          }
          assert.strictEqual(stalls, 1)
          assert.isNotNull(firedAt)
          const after = (firedAt ?? 0) - lastMove
          assert.isAbove(after, TIMEOUT - step)
          assert.isAtMost(after, TIMEOUT * 1.25 + step)
          assert.strictEqual(timers.armed(), 0, "no timer left after the stall")
        }
      )
    )
  })

  it("a paused response is not watched: stop holds it, a move watches it again", () => {
    const timers = manualTimers()
    let stalls = 0
    const watchdog = new IdleWatchdog(TIMEOUT, () => stalls++, timers)
    watchdog.moved()
    timers.advance(TIMEOUT / 2)
    watchdog.stop()
    assert.strictEqual(timers.armed(), 0)
    timers.advance(10 * TIMEOUT)
    assert.strictEqual(stalls, 0)
    watchdog.moved()
    timers.advance(2 * TIMEOUT)
    assert.strictEqual(stalls, 1)
  })
})
