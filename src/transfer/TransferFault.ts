/**
 * Why one attempt at a transfer stopped, classified for the retry loop:
 *
 * - `link`: the CDN refused the link (401/403/404/410) — ask for a fresh link.
 * - `restart`: continuing would splice two versions (200 to a ranged request, changed
 *   validator, Content-Range elsewhere, total ≠ expected size) — start again from zero.
 * - `transient`: connection reset, idle timeout, truncated body, 5xx/429 — retry with
 *   backoff from the bytes already written.
 * - `no-space`: ENOSPC/EDQUOT while writing — pause until space returns.
 * - `rate-limited`: the service's rate limit refused the link request (429) — wait until
 *   `retryAfterMillis` has passed, without counting an attempt (the account's limit, not
 *   this file's fault).
 * - `fatal`: nothing a retry on this pass can fix (other 4xx, disk I/O error, a refused TLS
 *   certificate or a handshake that cannot succeed, a body that never matches the expected
 *   size) — park the file with this reason, which names the CDN host.
 *
 * Raised by the imperative byte path as a rejection and by Effect code as a failure
 * as a typed failure once, at the boundary (a Data.TaggedError is both).
 */
import { Data } from "effect"
import { certificateAdvice, isCertificateVerdict } from "../net/certificateVerdict.ts"
import type { ParseError } from "./responseHead.ts"

export type FaultKind = "link" | "restart" | "transient" | "no-space" | "rate-limited" | "fatal"

export class TransferFault extends Data.TaggedError("TransferFault")<{
  readonly kind: FaultKind
  readonly message: string
  /** For `restart`: the server ignores Range, so the next attempt must be one plain GET. */
  readonly noRanges: boolean
  /** For `rate-limited`: how long the service asked to wait; absent when it did not say. */
  readonly retryAfterMillis?: number
  readonly cause?: unknown
}> {}

export const fault = (
  kind: FaultKind,
  message: string,
  options?: { readonly noRanges?: boolean; readonly retryAfterMillis?: number; readonly cause?: unknown }
): TransferFault =>
  new TransferFault({
    kind,
    message,
    noRanges: options?.noRanges ?? false,
    ...(options?.retryAfterMillis === undefined ? {} : { retryAfterMillis: options.retryAfterMillis }),
    ...(options?.cause === undefined ? {} : { cause: options.cause })
  })

/** Classifies a Node error from the byte path (socket, TLS, file system). */
export const faultFromError = (error: unknown, what: string): TransferFault => {
  if (error instanceof TransferFault) return error
  const code = errorCode(error)
  const message = error instanceof Error ? error.message : String(error)
  if (code === "ENOSPC" || code === "EDQUOT") return fault("no-space", `${what}: ${code}`, { cause: error })
  if (code === "EIO" || code === "EROFS" || code === "EBADF" || code === "EACCES" || code === "EPERM") {
    return fault("fatal", `${what}: ${code} ${message}`, { cause: error })
  }
  if (code !== undefined && isCertificateVerdict(code)) {
    // Node's own advice ("try running Node.js with --use-system-ca") is replaced by how to
    // give dlsync the trust.
    const reason = message.split(";")[0]
    const advice = certificateAdvice(code)
    const hint = advice === undefined ? "" : `; ${advice}`
    return fault("fatal", `${what}: TLS certificate refused (${code}): ${reason}${hint}`, { cause: error })
  }
  const setup = TLS_SETUP_REASONS.exec(message)
  if (setup !== null || (code !== undefined && TLS_SETUP_CODES.has(code))) {
    return fault("fatal", `${what}: no TLS session (${setup?.[0] ?? code}): does it serve https on this port?`, {
      cause: error
    })
  }
  if (code === "UND_ERR_BODY_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT") {
    return fault("transient", `${what}: stalled (${code})`, { cause: error })
  }
  return fault("transient", `${what}: ${code ?? ""} ${message}`.replace(/ +/g, " "), { cause: error })
}

/** What a response the parser refused (responseParser.ts) means for the transfer. */
export const faultFromParseError = (error: ParseError): TransferFault => {
  switch (error.reason) {
    case "head-too-large":
      return fault("fatal", "CDN response headers too large")
    case "framing":
      return fault("fatal", `CDN sent ${error.message}`)
    case "chunk":
    case "chunk-too-large":
      return fault("transient", `CDN sent a malformed chunked body: ${error.message}`)
    case "truncated":
      return fault("transient", `CDN response cut short: ${error.message}`)
    default:
      return fault("transient", `CDN sent a malformed response head: ${error.message}`)
  }
}

// ---------------------------------------------------------------------------------------

/**
 * Handshakes that cannot succeed on a retry (e.g. an https link to a plain-HTTP port), by
 * code or, when Node reports them as a socket EPROTO, by OpenSSL's reason.
 */
const TLS_SETUP_REASONS = /wrong version number|unsupported protocol|no protocols available/
const TLS_SETUP_CODES = new Set([
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_UNSUPPORTED_PROTOCOL",
  "ERR_SSL_NO_PROTOCOLS_AVAILABLE",
  "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION"
])

const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined
  return typeof error.code === "string" ? error.code : undefined
}
