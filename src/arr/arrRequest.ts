/**
 * One call to Sonarr's or Radarr's API: `X-Api-Key` header (Sonarr.Http/Authentication/
 * AuthenticationBuilderExtensions.cs), JSON decoded with the resource's schema, every failure
 * an ArrError in one line (ArrError.ts). The key goes in that header only, to the app's URL.
 */
import { Effect, Predicate, Redacted, Schema, SchemaIssue } from "effect"
import { answerText, errorSnippet, Outbound, type OutboundFailure, type OutboundRequest } from "../outbound/Outbound.ts"
import type { ArrTarget } from "./ArrApp.ts"
import { ArrError } from "./ArrError.ts"
import { SystemStatus } from "./arrSchemas.ts"

export const ARR_TIMEOUT_MS = 15_000
const MAX_ANSWER_BYTES = 16 * 1024 * 1024

export interface ArrCall {
  readonly method: "GET" | "DELETE"
  /** Below the API base, e.g. "/queue". */
  readonly path: string
  readonly query?: Readonly<Record<string, string>>
}

/** The call's answer decoded with `schema` (Schema.Unknown when only a 2xx matters). */
export const arrRequest = <S extends Schema.Decoder<unknown>>(
  target: ArrTarget,
  call: ArrCall,
  schema: S
): Effect.Effect<S["Type"], ArrError, Outbound> =>
  Effect.gen(function* () {
    const client = yield* Outbound
    const { app, settings } = target
    const url = new URL(`${settings.url}${app.apiBase}${call.path}`)
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value)
    const what = `${call.method} ${app.apiBase}${call.path}`
    const request: OutboundRequest = {
      method: call.method,
      url,
      headers: { "x-api-key": Redacted.value(settings.api_key), accept: "application/json" },
      timeoutMs: ARR_TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES
    }
    const answer = yield* client.send(request).pipe(Effect.mapError((failure) => unreachable(target, failure)))
    const text = answerText(answer)
    if (answer.status === 401 || answer.status === 403) {
      return yield* new ArrError({
        reason: "refused",
        problem: `${app.name} at ${settings.url} says the API key is wrong (HTTP ${answer.status}): set ${app.section}.api_key to the key in ${app.name} → Settings → General → Security`
      })
    }
    if (answer.status === 404) {
      return yield* new ArrError({ reason: "notFound", problem: `${app.name} answered 404 to ${what}` })
    }
    if (answer.status >= 500) {
      return yield* new ArrError({
        reason: "unreachable",
        problem: `${app.name} at ${settings.url} answered HTTP ${answer.status} to ${what}; is it starting?`
      })
    }
    if (answer.status < 200 || answer.status >= 300) {
      return yield* new ArrError({
        reason: "protocol",
        problem: `${app.name} answered HTTP ${answer.status} to ${what}${errorSnippet(request, answer)}`
      })
    }
    const notDocumented = (detail: string) =>
      new ArrError({ reason: "protocol", problem: `${app.name}'s answer to ${what} ${detail}` })
    let json: unknown
    try {
      json = text === "" ? {} : JSON.parse(text)
    } catch {
      return yield* notDocumented(`is not JSON${errorSnippet(request, answer)}`)
    }
    return yield* Schema.decodeUnknownEffect(schema)(json).pipe(
      Effect.mapError((e) => notDocumented(undocumented(e.issue)))
    )
  })

/**
 * GET system/status: the key is right and the URL is this app's API (Sonarr.Api.V3/System/
 * SystemController.cs `GetStatus`). A URL that is not the app's API (a 404 there, an HTML
 * page, another app) is `refused`: the configuration must change.
 */
export const checkStatus = (target: ArrTarget): Effect.Effect<SystemStatus, ArrError, Outbound> => {
  const { app, settings } = target
  const notTheApi = (detail: string) =>
    new ArrError({
      reason: "refused",
      problem: `${settings.url} is not ${app.name}'s API (${detail}): check ${app.section}.url, with ${app.name}'s URL Base if it has one`
    })
  return arrRequest(target, { method: "GET", path: "/system/status" }, SystemStatus).pipe(
    Effect.catchTag("ArrError", (e) =>
      e.reason === "notFound" || e.reason === "protocol" ? Effect.fail(notTheApi(e.problem)) : Effect.fail(e)
    ),
    Effect.flatMap((status) =>
      status.appName.toLowerCase() === app.name.toLowerCase()
        ? Effect.succeed(status)
        : Effect.fail(notTheApi(`it is ${status.appName} ${status.version}`))
    )
  )
}

// ---------------------------------------------------------------------------------------

const unreachable = (target: ArrTarget, failure: OutboundFailure): ArrError => {
  const { app, settings } = target
  const code = failure.code
  const why =
    failure.stage === "timeout"
      ? `no answer within ${ARR_TIMEOUT_MS / 1000} s`
      : code === "ECONNREFUSED"
        ? "connection refused"
        : code === "ENOTFOUND" || code === "EAI_AGAIN"
          ? "unknown host"
          : failure.stage === "invalid"
            ? "invalid URL"
            : `the connection failed${code === undefined ? "" : ` (${code})`}`
  return new ArrError({
    reason: "unreachable",
    problem: `cannot reach ${app.name} at ${settings.url}: ${why}; is it running, and is ${app.section}.url right?`
  })
}

/** What an answer lacks or holds that the API's does not: `has no "appName"`, `has "version": Expected string, got 5`. */
const undocumented = (issue: SchemaIssue.Issue): string => {
  const first = formatIssue(issue).issues[0]
  if (first === undefined) return "is not the API's"
  const path = (first.path ?? []).map((p) => JSON.stringify(Predicate.isObject(p) && "key" in p ? p.key : p))
  if (first.message === "Missing key") return `has no ${path.join(".")}`
  return path.length === 0 ? `is not the API's: ${first.message}` : `has ${path.join(".")}: ${first.message}`
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()
