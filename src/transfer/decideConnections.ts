/**
 * How many connections a segmented file uses next (pure). Many CDNs cap each connection
 * (25 MiB/s is common for debrid services): there, a file's rate grows with every
 * connection added, while on an uncapped link the first few already take what the link,
 * the disk or the CPU allow.
 *
 * A file starts on one connection: where one fills the line (an uncapped CDN close by, or a
 * CPU that is the limit) more only cost CPU (bench/README.md has the figures). Its first
 * step goes straight to a few (`firstStep`, transfers.segments), so a capped CDN loses one
 * window (≈ 0.5 s per file), not a doubling's worth each; from there a step doubles.
 *
 * The engine measures the file's aggregate rate over a window at a steady count and asks
 * after each window:
 *
 *   no step pending ─► far from done, permits free, pieces worth splitting? ─► Add (double,
 *        │                                                                    from one: a few)
 *        ▲                         │ permits taken: Hold (ask again)          │
 *        │                         │ rate still rising: Hold                  │
 *        │                         │ nearly done / nothing to split: Settle   ▼
 *        └──── the step helped ◄── measure at the new count ──► it did not: Settle,
 *                                                               giving the added ones back
 *
 * A step is judged against the rate before it, so that rate must be the count's own: a
 * file's first windows still hold its start (TLS handshakes, TCP's slow start, the first
 * commit), which read low, and a step judged against them is credited with the ramp (on an
 * uncapped loopback link a first window at 4 connections reads ≈ 25 % below the next ones,
 * so 4 → 8 would look like a gain where 4 already take the line's rate). So a step is taken
 * only once the rate has stopped rising.
 *
 * One connection's first window may step at once: a step from one must bring +50 %, and a
 * start reads lower than that only on a slow link (10–25 % below the next windows), where
 * the step is then kept.
 *
 * Invariants: Add never asks for more than the free permits, never more than doubles the
 * count (from one: never past `firstStep`), never gives a connection less than `minSegment`
 * bytes of what is left, and is never the answer to a window that is not the second or later
 * at its count (unless it judges a step that helped, or is a file's first on one connection);
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
  /** The window before this one, at whatever count; null at the file's first. */
  readonly previous: ConnectionSample | null
  /** Permits to the file's host free now (transfers.max_connections less those held). */
  readonly free: number
  /** Bytes of the file not yet received. */
  readonly remaining: number
  /** The smallest piece worth a connection of its own (the engine's split threshold). */
  readonly minSegment: number
  /** How long a step takes to judge (ramp-up and measuring window), in ms. */
  readonly stepMs: number
  /** The count a step from one connection goes to (transfers.segments). */
  readonly firstStep: number
}

export type ConnectionDecision =
  | { readonly _tag: "Add"; readonly count: number }
  | { readonly _tag: "Hold" }
  | { readonly _tag: "Settle"; readonly target: number }

/**
 * A step helps when each added connection brings at least this share of what one brought
 * before (a step from one connection to a few is judged as a doubling would be: +50 %);
 * otherwise the added ones are given back: each holds two read buffers and a TLS session
 * (≈ 3 MB), CPU, and a CDN's patience. Behind a per-connection cap a connection
 * brings ≈ 1. Where the CPU is the limit (2 GiB over https on loopback, 2 cores) windows at
 * a steady 4 connections read 440–640 MB/s, so 4 → 8 read as up to +35 % by chance: with
 * 0.25 the file often ran at 8 connections, which cost 0.25 CPU s more than 4 and were no
 * faster (3.94 against 3.69 CPU s, 3.77 against 3.60 s wall, 8 alternated runs each with the
 * count held fixed).
 */
export const MIN_GAIN_PER_ADDED = 0.5
/**
 * A window whose rate is more than this share above the window before it at the same count
 * is still ramping up: no step is taken from it. Only a rise holds: a link whose rate
 * wanders steps as soon as a window does not read higher than the last.
 */
export const MAX_RISE = 0.1
/** A step is tried only when at least this many steps' worth of time is left at the current rate (new connections pay off at once; judging one takes a step). */
export const STEPS_LEFT = 1

export const decideConnections = (i: ConnectionInputs): ConnectionDecision => {
  const current = Math.max(1, i.connections)
  // No byte in a whole window (a stall, durability catching up): nothing to judge by.
  if (!(i.rate > 0)) return { _tag: "Hold" }
  const pending = i.before !== null && i.before.connections < current && i.before.rate > 0 ? i.before : null
  if (pending !== null) {
    const added = Math.min(current - pending.connections, pending.connections)
    const perConnection = pending.rate / pending.connections
    const gained = (i.rate - pending.rate) / (added * perConnection)
    if (gained < MIN_GAIN_PER_ADDED) {
      return { _tag: "Settle", target: pending.connections }
    }
  }
  const worthSplitting = Math.floor(i.remaining / Math.max(1, i.minSegment))
  const secondsLeft = i.remaining / i.rate
  if (worthSplitting <= current || secondsLeft * 1000 < STEPS_LEFT * i.stepMs) {
    // Only less is left from here on: no later step could pay off either.
    return { _tag: "Settle", target: current }
  }
  // A step that helped was measured at its new count; any other step needs a steady rate,
  // but for one connection's first window (see above).
  const firstOnOne = current === 1 && i.previous === null
  if (pending === null && !firstOnOne && stillRising(i, current)) return { _tag: "Hold" }
  const step = current === 1 ? Math.max(1, i.firstStep - 1) : current
  const count = Math.min(step, Math.max(0, i.free), worthSplitting - current)
  return count > 0 ? { _tag: "Add", count } : { _tag: "Hold" }
}

/** Whether the rate may still be climbing at this count: no earlier window at it, or a rise. */
const stillRising = (i: ConnectionInputs, current: number): boolean =>
  i.previous === null || i.previous.connections !== current || i.rate > i.previous.rate * (1 + MAX_RISE)
