/**
 * Retry delay for a file's attempts (pure): exponential from `baseMs`, capped at `maxMs`,
 * with "full jitter" (a uniform draw in [delay/2, delay]) so that files that failed
 * together do not retry together. `random` is a draw in [0, 1).
 */
export const backoffDelay = (attempt: number, baseMs: number, maxMs: number, random: number): number => {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(exp / 2 + (exp / 2) * Math.min(Math.max(random, 0), 1))
}
