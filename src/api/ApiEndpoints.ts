/**
 * The two roots of the service: `baseUrl` (its path ends in /api/v1; every ordinary
 * operation lives under it) and `authUrl` (the host root serving OAuth and discovery).
 * Their origins are the only ones that ever receive the bearer.
 */
import { Context, Effect, Layer } from "effect"
import { type ApiError, clientValidation } from "./ApiError.ts"

export interface Endpoints {
  /** Without trailing slash, e.g. `https://svc.example/api/v1`. */
  readonly baseUrl: string
  /** Without trailing slash, e.g. `https://svc.example`. */
  readonly authUrl: string
}

export class ApiEndpoints extends Context.Service<ApiEndpoints, Endpoints>()("dlsync/api/ApiEndpoints") {
  /** Validates and normalizes both URLs (config's `service.base_url` and `service.auth_url`). */
  static readonly layer = (urls: Endpoints): Layer.Layer<ApiEndpoints, ApiError> =>
    Layer.effect(ApiEndpoints, makeEndpoints(urls))
}

/** Checks that both are absolute http(s) URLs without query or fragment and that base_url ends in /api/v1. */
export const makeEndpoints = Effect.fnUntraced(function* (urls: Endpoints): Effect.fn.Return<Endpoints, ApiError> {
  const baseUrl = yield* checkRoot("service.base_url", urls.baseUrl)
  const authUrl = yield* checkRoot("service.auth_url", urls.authUrl)
  if (!new URL(baseUrl).pathname.endsWith("/api/v1")) {
    return yield* clientValidation("configure API", "service.base_url", `must end in /api/v1, got ${baseUrl}`)
  }
  return ApiEndpoints.of({ baseUrl, authUrl })
})

/** The origin (scheme, host, port) of a URL, or undefined when it does not parse. */
export const originOf = (url: string): string | undefined => (URL.canParse(url) ? new URL(url).origin : undefined)

const checkRoot = (key: string, raw: string): Effect.Effect<string, ApiError> => {
  const fail = (why: string) => clientValidation("configure API", key, `${why}, got ${JSON.stringify(raw)}`)
  if (!URL.canParse(raw)) return Effect.fail(fail("must be an absolute URL"))
  const url = new URL(raw)
  if (url.protocol !== "https:" && url.protocol !== "http:") return Effect.fail(fail("must be an http or https URL"))
  if (url.search !== "" || url.hash !== "") return Effect.fail(fail("must not have a query or fragment"))
  if (url.username !== "" || url.password !== "") return Effect.fail(fail("must not embed credentials"))
  return Effect.succeed(raw.replace(/\/+$/, ""))
}
