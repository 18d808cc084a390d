/**
 * The headers every answer of the web page and its API carries: a strict Content-Security-
 * Policy (scripts, styles, images and connections from this server only, no inline script,
 * no frames, no form posted elsewhere), no framing at all (X-Frame-Options: DENY, against
 * clickjacking), no content sniffing, and no referrer sent to other sites.
 */
import { HttpServerResponse } from "effect/http"

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

export const securityHeaders = (
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => HttpServerResponse.setHeaders(response, HEADERS)
