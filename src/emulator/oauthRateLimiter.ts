/**
 * A sliding-window request limiter: at most `limit` requests per `windowMs` for each key.
 * Used by the device authorization endpoint (30/min per client) and by file state
 * (1,200/min per user and app). Time comes from the caller so tests advance it.
 */
export class RateLimiter {
  readonly #limit: number
  readonly #windowMs: number
  readonly #hits = new Map<string, Array<number>>()

  constructor(limit: number, windowMs: number) {
    this.#limit = limit
    this.#windowMs = windowMs
  }

  /**
   * Counts one request for `key` at `now` (ms). Returns undefined when it is allowed, or the
   * whole seconds (≥ 1) after which the oldest counted request leaves the window.
   */
  hit(key: string, now: number): number | undefined {
    const since = now - this.#windowMs
    const hits = (this.#hits.get(key) ?? []).filter((t) => t > since)
    this.#hits.set(key, hits)
    const oldest = hits[0]
    if (hits.length >= this.#limit && oldest !== undefined) {
      return Math.max(1, Math.ceil((oldest + this.#windowMs - now) / 1000))
    }
    hits.push(now)
    return undefined
  }
}
