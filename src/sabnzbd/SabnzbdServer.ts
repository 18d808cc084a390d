/**
 * The SABnzbd-compatible API: Sonarr, Radarr, Lidarr, Readarr and Prowlarr add dlsync as a
 * "SABnzbd" download client and talk to it as to SABnzbd 4.x:
 *
 *   GET|POST {base}/api?mode=…&apikey=…&output=json     (any {base}: "", "/sabnzbd", …)
 *     query + form fields (url-encoded or multipart) ─► sabnzbdApi.answer ─► JSON
 *
 * Off unless `[sabnzbd]` has an API key; then it listens on `sabnzbd.listen` (this host only
 * by default). Any Host is answered (an app may reach dlsync by a container name): the API
 * key is the gate. Requests are not logged (the API key is in the query).
 *
 * Bodies (server/requestBody.ts), read only as far as the key allows:
 * - with the API key in the query (as the apps send it): a url-encoded form within
 *   MAX_FORM_BYTES, a multipart upload (the NZB) streamed within MAX_BODY_BYTES;
 * - without it: at most PRE_AUTH_MAX_BYTES of body before the key is known. A multipart
 *   form may carry the key in a field (as @ctrl/sabnzbd does), ahead of the file: once
 *   read, the rest of the upload is taken as above. A url-encoded form must fit whole.
 * Too large is 413, too slow 408, malformed 400, each with a SABnzbd error document.
 *
 * A missing or wrong API key is answered 200 with SABnzbd's JSON error, as SABnzbd's report()
 * writes it, rather than SABnzbd 4's bare 403: the apps' test shows "API Key Incorrect" /
 * "API Key Required" only from a 2xx body (Sonarr Sabnzbd.cs TestAuthentication).
 * Lifetime and bounds: server/LocalServer.ts (a listen failure names sabnzbd.listen: one
 * line, exit 78).
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { SabnzbdSettings } from "../config/sabnzbdSettings.ts"
import { Intake } from "../intake/Intake.ts"
import type { ListenAddress } from "../server/ListenAddress.ts"
import { type HealthServerError, serveLocally } from "../server/LocalServer.ts"
import { type BodyRefused, CLOSE_CONNECTION, readMultipart, readUrlEncoded } from "../server/requestBody.ts"
import { formatBytes } from "../transfer/progressFormat.ts"
import { answer, checkApiKey, failure, type Json, type SabnzbdCall } from "./sabnzbdApi.ts"
import { respond } from "./sabnzbdOutput.ts"

/** The largest upload taken with the API key: an NZB of a big season pack is tens of MB. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

/** A url-encoded form, and each field of a multipart one. */
export const MAX_FORM_BYTES = 64 * 1024

/** The most of a body read before the API key is known. */
export const PRE_AUTH_MAX_BYTES = 4 * 1024

export interface SabnzbdServerOptions {
  readonly settings: SabnzbdSettings
  /** The mirror root (SABnzbd's complete_dir). */
  readonly root: string
  /** Overrides MAX_BODY_BYTES (tests). */
  readonly maxBodyBytes?: number
}

export class SabnzbdServer extends Context.Service<
  SabnzbdServer,
  {
    /** The bound origin, e.g. "http://127.0.0.1:8085"; undefined when the API is off. */
    readonly url: string | undefined
  }
>()("dlsync/sabnzbd/SabnzbdServer") {
  /** The daemon's one line: `SabnzbdServer.layer({ settings: config.sabnzbd, root: config.mirror.root })`. */
  static readonly layer = (options: SabnzbdServerOptions): Layer.Layer<SabnzbdServer, HealthServerError, Intake> => {
    const { listen, apiKey } = options.settings
    if (listen === "off" || apiKey._tag === "None")
      return Layer.succeed(SabnzbdServer, SabnzbdServer.of({ url: undefined }))
    return listening(listen, options, apiKey.value)
  }
}

// ---------------------------------------------------------------------------------------

/** A form without the key arrives within this long. */
const FORM_TIMEOUT = Duration.seconds(10)

/** An upload (tens of MB) arrives within this long. */
const UPLOAD_TIMEOUT = Duration.seconds(120)

/** Node's backstop behind the timeouts above. */
const REQUEST_TIMEOUT_MS = 150_000

const listening = (
  address: ListenAddress,
  options: SabnzbdServerOptions,
  apiKey: Parameters<typeof answer>[0]["apiKey"]
): Layer.Layer<SabnzbdServer, HealthServerError, Intake> => {
  const apiOptions = { apiKey, root: options.root, pathMap: options.settings.pathMap }
  const limits = { apiKey, maxBody: options.maxBodyBytes ?? MAX_BODY_BYTES }
  const serveApi = (request: HttpServerRequest.HttpServerRequest) =>
    isApiPath(request.url)
      ? readCall(request, limits).pipe(
          Effect.flatMap((call) => Effect.map(answer(apiOptions, call), (reply) => respond(call.params, reply))),
          Effect.catchTag("BadRequest", (bad) =>
            Effect.succeed(json(bad.status, failure(bad.problem), bad.status === 400 ? {} : CLOSE_CONNECTION))
          )
        )
      : Effect.succeed(HttpServerResponse.text("not found\n", { status: 404 }))
  const routes = Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      yield* router.add("*", "*", serveApi)
    })
  )
  return Layer.effect(
    SabnzbdServer,
    Effect.gen(function* () {
      const intake = yield* Intake
      // The apps' test fails unless their category is listed: the configured ones exist from the start.
      yield* Effect.forEach(
        options.settings.categories,
        (name) =>
          intake
            .createCategory("sabnzbd", name)
            .pipe(
              Effect.catchTag("IntakeError", (error) =>
                Effect.logWarning(`sabnzbd.categories: cannot create ${JSON.stringify(name)}: ${error.problem}`)
              )
            ),
        { discard: true }
      )
      const url = yield* serveLocally(
        {
          listen: address,
          setting: "sabnzbd.listen",
          name: "SABnzbd API",
          usage: "(in the app: its host and port, and the API key from sabnzbd.api_key)",
          exposure: "it adds downloads for whoever has the API key",
          requestTimeoutMs: REQUEST_TIMEOUT_MS
        },
        routes
      )
      return SabnzbdServer.of({ url })
    })
  )
}

/** `…/api` or `…/api/` under any base. */
const isApiPath = (url: string): boolean => /\/api\/?$/.test(new URL(url, "http://localhost").pathname)

class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  status: Schema.Number,
  problem: Schema.String
}) {}

/**
 * The call's parameters (query, then form fields; the first value of each) and files: a
 * body read no further than the API key known so far allows.
 */
const readCall = (
  request: HttpServerRequest.HttpServerRequest,
  limits: { readonly apiKey: Parameters<typeof checkApiKey>[0]; readonly maxBody: number }
): Effect.Effect<SabnzbdCall, BadRequest> => {
  const params = new Map<string, string>()
  const put = (key: string, value: string) => {
    if (!params.has(key)) params.set(key, value)
  }
  for (const [key, value] of new URL(request.url, "http://localhost").searchParams) put(key, value)
  if (request.method !== "POST") return Effect.succeed({ params, files: [] })
  // The key that answer() will check: the query's, else the form's first.
  const keyAccepted = (fields: ReadonlyMap<string, string>) =>
    checkApiKey(limits.apiKey, "queue", params.get("apikey") ?? fields.get("apikey")) === undefined

  if ((request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    return readMultipart(request, {
      maxBytes: limits.maxBody,
      maxFileBytes: limits.maxBody,
      maxFieldBytes: MAX_FORM_BYTES,
      maxParts: 64,
      timeout: UPLOAD_TIMEOUT,
      allowance: (fields) => (keyAccepted(fields) ? limits.maxBody : PRE_AUTH_MAX_BYTES)
    }).pipe(
      Effect.map((body): SabnzbdCall => {
        for (const [key, value] of body.fields) put(key, value)
        return { params, files: body.files }
      }),
      Effect.mapError((refusal) =>
        problemOf(refusal, limits.maxBody, "malformed multipart/form-data body: send the NZB as the `name` field")
      )
    )
  }
  const bound = keyAccepted(new Map()) ? MAX_FORM_BYTES : PRE_AUTH_MAX_BYTES
  return readUrlEncoded(request, { maxBytes: Math.min(bound, limits.maxBody), timeout: FORM_TIMEOUT }).pipe(
    Effect.map((fields): SabnzbdCall => {
      for (const [key, value] of fields) put(key, value)
      return { params, files: [] }
    }),
    Effect.mapError((refusal) => problemOf(refusal, limits.maxBody, "malformed request body"))
  )
}

const problemOf = (refusal: BodyRefused, maxBody: number, malformed: string): BadRequest => {
  switch (refusal.reason) {
    case "TooLarge":
      return new BadRequest({
        status: 413,
        problem:
          refusal.maxBytes === PRE_AUTH_MAX_BYTES && PRE_AUTH_MAX_BYTES < maxBody
            ? `request body too large without the API key: at most ${formatBytes(PRE_AUTH_MAX_BYTES)} before it (send apikey in the query, or in a field ahead of the file)`
            : `request body too large: at most ${formatBytes(refusal.maxBytes)}`
      })
    case "TooSlow":
      return new BadRequest({ status: 408, problem: "request body not received in time" })
    case "Unreadable":
      return new BadRequest({ status: 400, problem: malformed })
  }
}

const json = (status: number, body: Json, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.jsonUnsafe(body, {
    status,
    headers: { "cache-control": "no-store", pragma: "no-cache", ...headers }
  })
