/**
 * The bearer check of every route: the credential (a personal API key or an OAuth access
 * token) becomes a Principal, which the route's AuthRule then accepts or refuses with the
 * spec's 401 / 403 and its WWW-Authenticate header.
 */
import type { EmulatorContext } from "./context.ts"
import { apiError, type Principal, type Route, type RouteResult } from "./http.ts"

export type AuthOutcome =
  | { readonly ok: true; readonly principal: Principal | undefined }
  | { readonly ok: false; readonly error: RouteResult }

const REALM = 'Bearer realm="download-service"'

export const authorize = (context: EmulatorContext, route: Route, header: string | undefined): AuthOutcome => {
  const rule = route.auth
  if (rule.kind === "none") return { ok: true, principal: undefined }
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "")
  const token = match?.[1]
  if (token === undefined) {
    return {
      ok: false,
      error: {
        ...apiError(401, "unauthorized", "A bearer credential is required"),
        headers: { "WWW-Authenticate": REALM }
      }
    }
  }
  const principal = context.state.apiKeyPrincipal(token) ?? context.tokens.resolveAccessToken(token)
  if (principal === undefined) {
    return {
      ok: false,
      error: {
        ...apiError(401, "unauthorized", "The credential is invalid or expired"),
        headers: { "WWW-Authenticate": `${REALM}, error="invalid_token"` }
      }
    }
  }
  if (principal.kind === "apiKey") {
    if (rule.apiKey) return { ok: true, principal }
    return { ok: false, error: apiError(403, "forbidden", "Personal API keys are not accepted by this operation") }
  }
  if (rule.oauthScopes === null) {
    return { ok: false, error: apiError(403, "forbidden", "OAuth tokens are not accepted by this operation") }
  }
  const missing = rule.oauthScopes.filter((scope) => !principal.scopes.has(scope))
  if (missing.length > 0) {
    return {
      ok: false,
      error: {
        ...apiError(403, "insufficient_scope", `The token lacks the scope ${missing.join(" ")}`),
        headers: { "WWW-Authenticate": `${REALM}, error="insufficient_scope", scope="${rule.oauthScopes.join(" ")}"` }
      }
    }
  }
  return { ok: true, principal }
}
