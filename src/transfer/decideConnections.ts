/**
 * How many connections a segmented file uses next (pure). Many CDNs cap each connection
 * (25 MiB/s is common for debrid services): there, a file's rate grows with every
 * connection added, while on an uncapped link the first few already take what the link,
 * the disk or the CPU allow.
 *
 * The engine measures the file's aggregate rate over a window at a steady count and asks
 * after each window:
 *
 *   no step pending ─► far from done, permits free, pieces worth splitting? ─► Add (double)
 *        ▲                         │ permits taken: Hold (ask again)          │
 *        │                         │ nearly done / nothing to split: Settle   ▼
 *        └──── the step helped ◄── measure at the new count ──► it did not: Settle,
 *                                                               giving the added ones back
 *
 * Invariants: Add never asks for more than the free permits, never more than doubles the
 * count, and never gives a connection less than `minSegment` bytes of what is left;
 * Settle's target is between 1 and the current count.
 */

/** A count and the aggregate rate measured at it (bytes per second). */
export interface ConnectionSample {
  readonly connections: number
  readonly rate: number
}

export interface ConnectionInputs {
  /** The workers running now. */
  readonly connections: number
  /** The file's aggregate rate received over the last window, at `connections` (bytes per second). */
  readonly rate: number
  /** The sample before the last step up, still to be judged; null when no step is pending. */
  readonly before: ConnectionSample | null
  /** Permits to the file's host free now (transfers.max_connections less those held). */
  readonly free: number
  /** Bytes of the file not yet received. */
  readonly remaining: number
  /** The smallest piece worth a connection of its own (the engine's split threshold). */
  readonly minSegment: number
  /** How long a step takes to judge (ramp-up and measuring window), in ms. */
  readonly stepMs: number
}

export type ConnectionDecision =
  | { readonly _tag: "Add"; readonly count: number }
  | { readonly _tag: "Hold" }
  | { readonly _tag: "Settle"; readonly target: number }

/**
 * A step helps when each added connection brings at least this share of what one brought
 * before; otherwise the added ones are given back: each holds two read buffers and a TLS
 * session (≈ 3 MB), and a CDN's patience. (On an uncapped link, 4 → 8 brought 0.1–0.24.)
 */
export const MIN_GAIN_PER_ADDED = 0.25
/** A step is tried only when at least this many steps' worth of time is left at the current rate (new connections pay off at once; judging one takes a step). */
export const STEPS_LEFT = 1

export const decideConnections = (i: ConnectionInputs): ConnectionDecision => {
  const current = Math.max(1, i.connections)
  // No byte in a whole window (a stall, durability catching up): nothing to judge by.
  if (!(i.rate > 0)) return { _tag: "Hold" }
  if (i.before !== null && i.before.connections < current && i.before.rate > 0) {
    const added = current - i.before.connections
    const perConnection = i.before.rate / i.before.connections
    const gained = (i.rate - i.before.rate) / (added * perConnection)
    if (gained < MIN_GAIN_PER_ADDED) {
      return { _tag: "Settle", target: i.before.connections }
    }
  }
  const worthSplitting = Math.floor(i.remaining / Math.max(1, i.minSegment))
  const secondsLeft = i.remaining / i.rate
  if (worthSplitting <= current || secondsLeft * 1000 < STEPS_LEFT * i.stepMs) {
    // Only less is left from here on: no later step could pay off either.
    return { _tag: "Settle", target: current }
  }
  const count = Math.min(current, Math.max(0, i.free), worthSplitting - current)
  return count > 0 ? { _tag: "Add", count } : { _tag: "Hold" }
}
