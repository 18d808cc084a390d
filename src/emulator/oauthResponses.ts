/**
 * The answers of the token and device-authorization endpoints: never cached, errors in
 * the OAuth shape, and every 401 with a `WWW-Authenticate` challenge.
 */
import { oauthError, type RouteResult } from "./http.ts"

/** The headers every token-endpoint and device-authorization answer carries. */
export const NO_STORE: Readonly<Record<string, string>> = { "cache-control": "no-store", pragma: "no-cache" }

export const challenge = (error: string): Readonly<Record<string, string>> => ({
  "www-authenticate": `Basic realm="oauth", error="${error}"`
})

export const tokenOk = (body: object): RouteResult => ({ kind: "json", status: 200, body, headers: NO_STORE })

export const tokenError = (
  status: number,
  error: string,
  extra: { readonly message?: string; readonly hint?: string },
  retryAfterSeconds?: number,
  headers?: Readonly<Record<string, string>>
): RouteResult =>
  oauthError(status, error, extra, {
    ...NO_STORE,
    ...(retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) }),
    ...headers
  })

export const invalidClient = (message: string): RouteResult =>
  tokenError(401, "invalid_client", { message }, undefined, challenge("invalid_client"))
