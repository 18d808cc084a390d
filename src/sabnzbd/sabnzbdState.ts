/**
 * What the SABnzbd surface keeps that the intake does not: each job's priority (as the app
 * set it, shown in the queue), the speed limit and pause interval set through `config`
 * (shown, not applied: dlsync's rate is `transfer.bandwidth_limit`), and each NZB's size
 * read from the NZB until the service knows it. In memory, one per API options object: a
 * restart shows every job at Normal priority again.
 */
import type { IntakeId } from "../domain/IntakeId.ts"

/** SABnzbd's priorities (constants.py) and the names its queue shows. */
export const PRIORITY_NAMES: Readonly<Record<number, string>> = {
  2: "Force",
  1: "High",
  0: "Normal",
  [-1]: "Low"
}
export const PAUSED_PRIORITY = -2
export const DEFAULT_PRIORITY = -100

export interface SabnzbdState {
  readonly priorities: Map<IntakeId, number>
  readonly nzbSizes: Map<IntakeId, number>
  speedlimit: string
  pauseInterval: number
}

/** The state of one surface (its API options object). */
export const stateOf = (owner: object): SabnzbdState => {
  const found = STATES.get(owner)
  if (found !== undefined) return found
  const fresh: SabnzbdState = { priorities: new Map(), nzbSizes: new Map(), speedlimit: "100", pauseInterval: 0 }
  STATES.set(owner, fresh)
  return fresh
}

// ---------------------------------------------------------------------------------------

const STATES = new WeakMap<object, SabnzbdState>()
