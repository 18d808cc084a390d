/**
 * Which TLS failures are a verdict on the peer's certificate (Node passes OpenSSL's verdict
 * as the error's code), and the advice a user can act on. A verdict does not change on a
 * retry: the CDN's byte path and the API client both give up at once and say it.
 */

/** The peer's certificate was refused (expired, untrusted issuer, another host's name, …). */
export const isCertificateVerdict = (code: string): boolean =>
  CERTIFICATE_CODES.has(code) || code.startsWith("ERR_TLS_CERT")

/** What to do about `code`: for an issuer dlsync does not know, how to give it the trust. */
export const certificateAdvice = (code: string): string | undefined =>
  UNKNOWN_ISSUER_CODES.has(code)
    ? "if you trust its issuer, name its CA certificate in NODE_EXTRA_CA_CERTS, or set NODE_OPTIONS=--use-system-ca to trust the system's CA store"
    : undefined

const CERTIFICATE_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH"
])

/** Verdicts that a trusted issuer would fix: the user may add one with NODE_EXTRA_CA_CERTS. */
const UNKNOWN_ISSUER_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN"
])
