/**
 * The contract suite's harness: one emulator per test file (shared through `layer(...)`),
 * clients built from src/api exactly as production builds them (`ApiClient.layerLive`),
 * and small helpers to read what reached the emulator.
 *
 * Isolation inside a file: each test works as its own user (`freshUser`), so listings,
 * change feeds, storage namespaces and downloads of one test never see another's.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import type { ApiError, ApiErrorReason } from "../../src/api/ApiError.ts"
import { ApiHttpSettings, ApiObserver, type HttpSettings } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { Cursor, DownloadId, FileId, SelectionId } from "../../src/api/schemas/common.ts"
import type { NewUser } from "../../src/emulator/control.ts"
import type { LoggedRequest } from "../../src/emulator/requestLog.ts"
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"

/** The running emulator of the current test file. */
export class Emulator extends Context.Service<Emulator, RunningEmulator>()("test/contract/Emulator") {
  /** Starts an emulator with the control API on 127.0.0.1 (free ports) and closes it after the file. */
  static readonly layer = (options: EmulatorOptions = {}): Layer.Layer<Emulator> =>
    Layer.effect(
      Emulator,
      Effect.acquireRelease(
        Effect.promise(() => startEmulator({ host: "127.0.0.1", control: true, library: "empty", ...options })),
        (e) => Effect.promise(() => e.close())
      )
    )
}

/** Fast retries (1 ms backoff ceilings) so that retried calls finish at once; 5 attempts. */
export const FAST_RETRIES: HttpSettings = {
  schedule: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 5, maxInlineWaitMs: 5_000 },
  timeoutMs: 10_000,
  maxResponseBytes: 4 * 1024 * 1024
}

/**
 * Runs `f` with a fresh production client (`ApiClient.layerLive`) aimed at the emulator,
 * sending `bearer` (an API key, or an OAuth access token passed through as a bearer), or
 * with the given Credentials.
 * Built locally so that no client, cache or credential leaks between calls.
 */
export const withClient = <A, E, R>(
  bearer: string | Layer.Layer<Credentials>,
  f: (client: ApiClient["Service"]) => Effect.Effect<A, E, R>,
  settings: HttpSettings = FAST_RETRIES
): Effect.Effect<A, E, R | Emulator> =>
  Effect.gen(function* () {
    const e = yield* Emulator
    const credentials = typeof bearer === "string" ? Credentials.apiKey(Redacted.make(bearer)) : bearer
    const layer = Layer.mergeAll(
      ApiClient.layerLive({ baseUrl: e.baseUrl, authUrl: e.authUrl }).pipe(
        Layer.provide(Layer.merge(credentials, ApiObserver.none)),
        Layer.orDie
      ),
      Layer.succeed(ApiHttpSettings, settings)
    )
    return yield* ApiClient.use(f).pipe(Effect.provide(layer, { local: true }))
  })

/** A new user of the emulator with an API key and an OAuth pair carrying every scope. */
export const freshUser: Effect.Effect<NewUser, never, Emulator> = Emulator.useSync((e) => e.control.addUser())

/** The failure's reason, failing the test when the effect succeeded. */
export const failureOf = <A, R>(effect: Effect.Effect<A, ApiError, R>): Effect.Effect<ApiErrorReason, never, R> =>
  Effect.flip(effect).pipe(
    Effect.map((e) => e.reason),
    Effect.catchCause(() => Effect.die(new Error("expected an ApiError")))
  )

/** Asserts the reason's tag and narrows it. */
export function assertReason<T extends ApiErrorReason["_tag"]>(
  reason: ApiErrorReason,
  tag: T
): asserts reason is Extract<ApiErrorReason, { readonly _tag: T }> {
  assert.strictEqual(reason._tag, tag, `expected ${tag}, got ${reason._tag}: ${reason.message}`)
}

/** The reason of a failed call, asserted to carry `tag` (and, when given, HTTP `status`). */
export const expectReason = <T extends ApiErrorReason["_tag"], A, R>(
  effect: Effect.Effect<A, ApiError, R>,
  tag: T,
  status?: number
): Effect.Effect<Extract<ApiErrorReason, { readonly _tag: T }>, never, R> =>
  Effect.map(failureOf(effect), (reason) => {
    assertReason(reason, tag)
    if (status !== undefined) assert.strictEqual("status" in reason ? reason.status : undefined, status)
    return reason
  })

/** Requests the emulator logged after `afterSeq` (both origins unless told). */
export const requestsSince = (
  afterSeq: number,
  origin?: "api" | "cdn"
): Effect.Effect<ReadonlyArray<LoggedRequest>, never, Emulator> =>
  Emulator.useSync((e) => e.control.requests({ afterSeq, ...(origin ? { origin } : {}) }))

/** The seq of the last logged request (0 when none): a mark to read the log from. */
export const logMark: Effect.Effect<number, never, Emulator> = Emulator.useSync(
  (e) => e.control.requests().at(-1)?.seq ?? 0
)

/** A raw exchange with the emulator (no client): for what the client refuses to send. */
export const rawCall = (
  method: string,
  url: string,
  options: { readonly bearer?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
): Effect.Effect<{ readonly status: number; readonly headers: Headers; readonly json: unknown }> =>
  Effect.promise(async () => {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers }
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`
    const response = await fetch(url, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: options.body })
    })
    const text = await response.text()
    const isJson = (response.headers.get("content-type") ?? "").includes("json") && text !== ""
    return { status: response.status, headers: response.headers, json: isJson ? JSON.parse(text) : undefined }
  })

/** A POST to the emulator's HTTP control API (`/_control…`); the test fails unless it answers 2xx. */
export const control = (path: string, body: unknown = {}) =>
  Emulator.use((e) =>
    rawCall("POST", `${e.controlUrl}${path}`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  ).pipe(
    Effect.tap((r) =>
      r.status >= 200 && r.status < 300
        ? Effect.void
        : Effect.die(new Error(`control ${path} answered ${r.status}: ${JSON.stringify(r.json)}`))
    )
  )

/** An OAuth access token for `userId` through `clientId` with exactly `scopes` (POST /_control/oauth/tokens). */
export const issueToken = (userId: string, clientId: string, scopes: ReadonlyArray<string>) =>
  Effect.map(control("/oauth/tokens", { user_id: userId, client_id: clientId, scopes }), (r) => {
    const token = prop(r.json, "access_token")
    assert.isString(token)
    return String(token)
  })

/** Typed identifiers from the emulator's strings. */
export const fid = Schema.decodeSync(FileId)
export const did = Schema.decodeSync(DownloadId)
export const sid = Schema.decodeSync(SelectionId)
export const cursorOf = Schema.decodeSync(Cursor)

/** A JSON value's property, for loosely typed bodies. */
export const prop = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && key in value ? Reflect.get(value, key) : undefined
