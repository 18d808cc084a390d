/**
 * The headers every answer of the web page and its API carries: a strict Content-Security-
 * Policy (scripts, styles, images and connections from this server only, no inline script
 * or style, no frames, no form posted elsewhere), no framing at all (X-Frame-Options: DENY,
 * against clickjacking), no content sniffing, and no referrer sent to other sites. The page
 * itself (pageAssets.ts) carries its script and style inline: its policy allows those two,
 * by their hashes, and no other script or style at all.
 */
import { HttpServerResponse } from "effect/http"

/** The policy; with `inline`, the one of the page whose only script and style have these hash sources. */
export const contentSecurityPolicy = (inline?: { readonly script: string; readonly style: string }): string =>
  [
    "default-src 'none'",
    `script-src ${inline?.script ?? "'self'"}`,
    `style-src ${inline?.style ?? "'self'"}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; ")

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy()

const HEADERS: Readonly<Record<string, string>> = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

export const securityHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  policy: string = CONTENT_SECURITY_POLICY
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(response, { ...HEADERS, "content-security-policy": policy })
