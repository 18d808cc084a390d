/**
 * The API client's shared rate-limit gate (pure arithmetic; ApiHttp keeps one gate per
 * rate-limit group and sends every request through it).
 *
 * A 429 is the account's rate limit, not one request's: once the service answers any
 * request of a group with 429 and `Retry-After: R`, no request of that group — from any
 * file, fiber or caller — is sent until R has passed. Then the pace comes back gradually,
 * so the requests that queued up during the pause do not all hit the service at once:
 *
 *   open ──429 (R)──► paused until now+R ──► ramp: RAMP_START_PER_SECOND, doubling every
 *    ▲                      ▲                RAMP_DOUBLING_MS ──► RAMP_OPEN_PER_SECOND ──► open
 *    │                      └──────────────────── 429 again ◄───┘
 *
 * A group is one operation (route template), except the file-state operations, which the
 * spec limits together (1,200 requests per minute per user and app for GET, PUT and
 * DELETE /files/{file}/state). Other limits are "not shown" by the spec, so a 429 on one
 * operation does not hold back another one (a link request's 429 does not stop the feed).
 */

/** Requests per second allowed as the pause ends. */
export const RAMP_START_PER_SECOND = 2
/** The ramp's rate doubles after each such period without a 429. */
export const RAMP_DOUBLING_MS = 1_000
/** Once the ramp would allow this rate, the gate opens altogether. */
export const RAMP_OPEN_PER_SECOND = 64
/** Pause after a 429 without a usable Retry-After (the spec says it is always sent). */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000

export interface RateGate {
  /** No request of the group is sent before this time (ms). */
  readonly pausedUntil: number
  /** The earliest time the next request may go (≥ pausedUntil); spaced during the ramp. */
  readonly nextAt: number
}

/** The group a request's rate limit belongs to: its operation, or the file-state group. */
export const rateLimitGroup = (operation: string): string => {
  const space = operation.indexOf(" ")
  const template = operation.slice(space + 1)
  return template === FILE_STATE_TEMPLATE ? `* ${FILE_STATE_TEMPLATE}` : operation
}

/** A 429 at `now`: hold the group for `retryAfterMs` (never shortening a longer pause), then ramp. */
export const closeGate = (gate: RateGate | undefined, now: number, retryAfterMs: number | undefined): RateGate => {
  const pausedUntil = Math.max(gate?.pausedUntil ?? 0, now + (retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS))
  return { pausedUntil, nextAt: pausedUntil }
}

/**
 * Lets one request through at `now`, or says how long to wait before asking again.
 * `gate` undefined means open; the result's gate is undefined once the ramp is over.
 */
export const admit = (
  gate: RateGate | undefined,
  now: number
): { readonly gate: RateGate | undefined; readonly waitMs: number } => {
  if (gate === undefined) return { gate, waitMs: 0 }
  if (now < gate.nextAt) return { gate, waitMs: gate.nextAt - now }
  const rate = rampRate(gate, now)
  if (rate === undefined) return { gate: undefined, waitMs: 0 }
  return { gate: { ...gate, nextAt: now + Math.ceil(1_000 / rate) }, waitMs: 0 }
}

/** The ramp's rate (requests per second) at `now`, or undefined once it has reached RAMP_OPEN_PER_SECOND. */
export const rampRate = (gate: RateGate, now: number): number | undefined => {
  const doublings = Math.floor(Math.max(0, now - gate.pausedUntil) / RAMP_DOUBLING_MS)
  const rate = RAMP_START_PER_SECOND * 2 ** doublings
  return rate >= RAMP_OPEN_PER_SECOND ? undefined : rate
}

// ---------------------------------------------------------------------------------------

const FILE_STATE_TEMPLATE = "/files/{file}/state"
