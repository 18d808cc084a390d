/**
 * A request's idle watchdog: it calls `onStall` once the response has not moved for
 * `timeoutMs` (up to a quarter more), and never while it keeps moving, however slowly.
 *
 * The hot path only counts: `moved` runs on every socket read, and moving a timer there cost
 * 4 % of the whole process's CPU (perf, 2 GiB over https), reading a clock half that. So the
 * timer looks for moves four times per timeout instead, and four quiet looks in a row are a
 * stall. A paused response (waiting for a write, for the rate limit) is not watched.
 */
import { nodeTimers, type Timer, type Timers } from "../pacing/systemClock.ts"

export class IdleWatchdog {
  private readonly timeoutMs: number
  private readonly onStall: () => void
  private readonly timers: Timers
  private timer: Timer | null = null
  /** Moves since the last look, and how many looks in a row saw none. */
  private moves = 0
  private quietLooks = 0

  constructor(timeoutMs: number, onStall: () => void, timers: Timers = nodeTimers) {
    this.timeoutMs = timeoutMs
    this.onStall = onStall
    this.timers = timers
  }

  /** The response moved (bytes landed, reading resumed); watched from now on. */
  moved(): void {
    this.moves++
    this.timer ??= this.timers.after(this.timeoutMs / LOOKS, this.look)
  }

  /** Reading paused or ended: not watched until it moves again. */
  stop(): void {
    this.timer?.cancel()
    this.timer = null
    this.quietLooks = 0
  }

  private readonly look = (): void => {
    this.quietLooks = this.moves === 0 ? this.quietLooks + 1 : 0
    this.moves = 0
    if (this.quietLooks < LOOKS) {
      this.timer?.restart()
      return
    }
    this.timer = null
    this.quietLooks = 0
    this.onStall()
  }
}

/** Looks per timeout: a stall is found within a quarter of it late. */
const LOOKS = 4
