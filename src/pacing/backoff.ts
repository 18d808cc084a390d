/**
 * The program's one retry backoff (pure): the API client's request retries, a file's
 * transfer attempts and the app-state writer's failed writes all wait by it.
 *
 * Exponential with full jitter: retry n (1 for the first) waits a uniform draw from
 * [0, min(maxMs, baseMs · 2^(n-1))). Of the usual policies, full jitter spreads callers
 * that failed together (every transfer when the CDN blips, every device when the service
 * is down) over the whole window, so the fewest retries land on a recovering service
 * together; the limits on attempts are counts, and none relies on a minimum wait.
 * `random` is a draw in [0, 1).
 */
export const backoffDelay = (retry: number, random: number, baseMs: number, maxMs: number): number => {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1))
  return Math.floor(Math.min(Math.max(random, 0), 1) * ceiling)
}
