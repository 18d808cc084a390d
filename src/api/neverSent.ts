/**
 * Whether a failed request provably never reached the server. Only then may a
 * non-idempotent request (download creation, token exchange, …) be sent again: the
 * connection was never established, so not one byte of the request was processed.
 * Anything else (reset, timeout, TLS failure, an unknown error) may have been processed.
 */

/** Walks an error's `cause` chain (and AggregateError members) for a system error code. */
export const errorCodes = (error: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  const seen = new Set<unknown>()
  const visit = (e: unknown, depth: number) => {
    if (depth > 8 || typeof e !== "object" || e === null || seen.has(e)) return
    seen.add(e)
    if ("code" in e && typeof e.code === "string") out.push(e.code)
    if ("errors" in e && Array.isArray(e.errors)) for (const inner of e.errors) visit(inner, depth + 1)
    if ("cause" in e) visit(e.cause, depth + 1)
  }
  visit(error, 0)
  return out
}

/** True when at least one code was found and every one says the connection was never made. */
export const provablyNeverSent = (error: unknown): boolean => {
  const codes = errorCodes(error)
  return codes.length > 0 && codes.every((c) => NEVER_SENT_CODES.has(c))
}

// ---------------------------------------------------------------------------------------

/** System error codes meaning the connection was never established, so no request byte was sent. */
const NEVER_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])
