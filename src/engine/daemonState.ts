/**
 * What the daemon remembers between polls and reconciles, as one value, and the pure rules
 * that read and change it. Daemon.ts holds it in one Ref; nothing else keeps daemon state.
 *
 * Invariants:
 * - A change under the root, a pass that left failures (once RETRY_FAILED_POLLS poll
 *   intervals passed), remote cleanup come due since the last reconcile started, a store
 *   changed by the catch-up, or a signal owe a reconcile; nothing else does.
 * - What a reconcile owes is settled when it starts: changes from then on owe the next one.
 * - A mirror stays "in line" (the last pass had no failure and no held deletion) until a
 *   reconcile starts.
 */
import type { ListingCost } from "../sync/listingCadence.ts"
import type { Wake } from "./daemonLoop.ts"

/** Failed items are retried after this many poll intervals. */
export const RETRY_FAILED_POLLS = 5

export interface DaemonState {
  /** The service refused the sign-in and no catch-up succeeded since (one episode). */
  readonly loginRequired: boolean
  /** The last pass left the mirror in line; false while one runs. */
  readonly inLine: boolean
  /** When the last pass ended with failures; null when it had none, or a pass runs. */
  readonly failedAt: number | null
  /** When the last reconcile started (remote cleanup due after it owes one). */
  readonly reconciledAt: number
  /** When the last full listing of this process started (listing mode). */
  readonly lastFullAt: number
  /** What that listing cost; null until one, then it is estimated from the store. */
  readonly listingCost: ListingCost | null
}

export const initialDaemonState = (now: number): DaemonState => ({
  loginRequired: false,
  inLine: false,
  failedAt: null,
  reconciledAt: 0,
  lastFullAt: now,
  listingCost: null
})

/** What a successful catch-up found, for deciding whether a reconcile is owed. */
export interface CatchUpFacts {
  readonly now: number
  readonly reason: Wake
  readonly storeChanged: boolean
  /** Something changed under the root since the last reconcile started (daemonWakes.ts). */
  readonly localChanged: boolean
  /** When remote cleanup next has a file come of age or a retry due; null: nothing pending. */
  readonly cleanupDueAt: number | null
  readonly pollInterval: number
}

export const owesReconcile = (state: DaemonState, facts: CatchUpFacts): boolean => {
  const retryDue = state.failedAt !== null && facts.now - state.failedAt >= RETRY_FAILED_POLLS * facts.pollInterval
  const cleanupDue =
    facts.cleanupDueAt !== null && facts.cleanupDueAt <= facts.now && facts.cleanupDueAt > state.reconciledAt
  return (
    facts.storeChanged ||
    facts.localChanged ||
    retryDue ||
    cleanupDue ||
    facts.reason === "signal" ||
    facts.reason === "intake"
  )
}

/** A reconcile starts at `now`: what it owes is settled, the mirror is not in line while it runs. */
export const reconcileStarting = (state: DaemonState, now: number): DaemonState => ({
  ...state,
  inLine: false,
  failedAt: null,
  reconciledAt: now
})

/**
 * A reconcile ended at `now`: with its report's failures and held deletion, or null when it
 * was given up (no room, a full state disk), which is retried like a failure.
 */
export const reconcileEnded = (
  state: DaemonState,
  now: number,
  report: { readonly failures: number; readonly held: boolean } | null
): DaemonState => {
  if (report === null) return { ...state, failedAt: now }
  return {
    ...state,
    inLine: report.failures === 0 && !report.held,
    failedAt: report.failures > 0 ? now : null
  }
}
