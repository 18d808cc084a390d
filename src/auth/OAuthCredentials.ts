/**
 * OAuth tokens behind the client's `Credentials` seam, with rotation.
 *
 *   bearer ─► near expiry? ─► refresh ─┐          401 ─► refreshAfterUnauthorized ─► refresh ─┐
 *                                      ▼                                                     ▼
 *        in-process single flight (semaphore) ─► cross-process lock ─► re-read token file
 *          ─► the file holds a pair we did not have? adopt it (another process rotated)
 *          ─► else POST refresh_token ─► write the new pair durably ─► then use it
 *
 * Invariants:
 * - A refresh token is sent at most once, by one process, and only after the token file
 *   was re-read under the lock: processes sharing a state dir never burn each other's
 *   rotated token. The request and the write of its answer are uninterruptible, so a
 *   shutdown cannot drop a rotated pair between the two.
 * - The new pair is on disk (fsynced) before any request uses it. A crash before the write
 *   leaves the old pair, which the service may have invalidated: the next refresh then
 *   gets `invalid_grant` and the state is a clear "login required", never a loop.
 * - `invalid_grant` (or a refresh token of another client) is LoginRequired, surfaced to
 *   the client as ApiError Unauthorized with code `login_required`. While in that state
 *   each call re-reads the token file, so a `dlsync login` in another shell heals a
 *   running daemon without a restart.
 * - Tokens are Redacted; nothing here logs a token.
 */
import { Clock, Context, Effect, Layer, Option, Redacted, Ref, Semaphore } from "effect"
import type { ApiError } from "../api/ApiError.ts"
import { Credentials } from "../api/Credentials.ts"
import { LoginRequired, loginRequiredAsApiError, type TokenStoreError } from "./AuthError.ts"
import { toStoredTokens } from "./deviceLogin.ts"
import { OAuthEndpoints } from "./OAuthEndpoints.ts"
import { type StoredTokens, TokenStore } from "./TokenStore.ts"

/** What the running process knows about its sign-in, for logs, status and the engine. */
export class AuthStatus extends Context.Service<
  AuthStatus,
  {
    readonly mode: "oauth" | "apiKey"
    /** App state and app storage accept only OAuth tokens. */
    readonly appStateAvailable: boolean
    /** The reason a person must sign in again, while that is so. */
    readonly loginRequired: Effect.Effect<Option.Option<LoginRequired>>
  }
>()("dlsync/auth/AuthStatus") {
  /** Personal API key mode: no app state, never "login required" from here. */
  static readonly apiKey: Layer.Layer<AuthStatus> = Layer.succeed(
    AuthStatus,
    AuthStatus.of({ mode: "apiKey", appStateAvailable: false, loginRequired: Effect.succeedNone })
  )
}

export interface OAuthContext {
  /** `service.auth_url`: the tokens must have been issued by it (refreshes use the client id stored with them). */
  readonly authUrl: string
}

/** Refresh this long before expiry: a tenth of the lifetime, between 1 s and 60 s. */
export const refreshMarginMs = (lifetimeSeconds: number): number =>
  Math.min(60_000, Math.max(1_000, Math.floor(lifetimeSeconds * 100)))

/** True when the access token is within its margin of expiry (or past it). */
export const needsRefresh = (tokens: StoredTokens, nowMs: number): boolean =>
  nowMs >= tokens.expiresAtMs - refreshMarginMs(tokens.lifetimeSeconds)

export const OAuthCredentials = {
  /**
   * Credentials and AuthStatus from the token file. Never fails to build: without tokens
   * every bearer request fails with `login_required` until tokens appear in the file.
   */
  layer: (context: OAuthContext): Layer.Layer<Credentials | AuthStatus, TokenStoreError, TokenStore | OAuthEndpoints> =>
    Layer.effectContext(
      Effect.gen(function* () {
        const session = yield* makeSession(context)
        return Context.make(
          Credentials,
          Credentials.of({
            bearer: session.bearer,
            refreshAfterUnauthorized: session.refreshAfterUnauthorized
          })
        ).pipe(
          Context.add(
            AuthStatus,
            AuthStatus.of({ mode: "oauth", appStateAvailable: true, loginRequired: session.loginRequired })
          )
        )
      })
    )
}

// ---------------------------------------------------------------------------------------

interface SessionState {
  readonly tokens: Option.Option<StoredTokens>
  readonly problem: Option.Option<LoginRequired>
  /** The pair in memory is newer than the file (its write failed); write again. */
  readonly unsaved: boolean
}

const makeSession = Effect.fnUntraced(function* (context: OAuthContext) {
  const store = yield* TokenStore
  const oauth = yield* OAuthEndpoints
  const initial = yield* store.read
  const state = yield* Ref.make<SessionState>(classify(initial, context))
  const singleFlight = yield* Semaphore.make(1)

  const fail = (problem: LoginRequired) =>
    Ref.update(state, (s) => ({ ...s, problem: Option.some(problem) })).pipe(
      Effect.andThen(Effect.logWarning("login required").pipe(Effect.annotateLogs({ reason: problem.detail }))),
      Effect.andThen(Effect.fail(problem))
    )

  const adopt = (tokens: StoredTokens) =>
    Ref.set(state, { tokens: Option.some(tokens), problem: Option.none(), unsaved: false }).pipe(Effect.as(tokens))

  /** The file's pair when it is usable for this service, else LoginRequired. */
  const fromFile = Effect.gen(function* () {
    const read = classify(yield* store.read, context)
    if (Option.isSome(read.problem)) return yield* fail(read.problem.value)
    return Option.getOrThrow(read.tokens)
  })

  const saveIfUnsaved = Effect.gen(function* () {
    const s = yield* Ref.get(state)
    if (!s.unsaved || Option.isNone(s.tokens)) return
    const tokens = s.tokens.value
    yield* store.withLock(store.write(tokens)).pipe(
      Effect.andThen(Ref.update(state, (cur) => (cur.tokens === s.tokens ? { ...cur, unsaved: false } : cur))),
      Effect.catch((e) =>
        Effect.logError("still cannot store the rotated tokens").pipe(Effect.annotateLogs({ error: e.message }))
      )
    )
  })

  /**
   * Replaces `used` with a fresh pair, once per process and under the file lock. `why`
   * decides whether a pair found in the file is good enough: before expiry it must not be
   * near expiry itself; after a 401 it must differ from the access token that got the 401.
   */
  const refresh = Effect.fnUntraced(
    function* (used: StoredTokens, why: "expiring" | "unauthorized") {
      const current = yield* Ref.get(state)
      if (Option.isSome(current.tokens) && !sameRefresh(current.tokens.value, used)) return current.tokens.value
      return yield* store.withLock(
        Effect.gen(function* () {
          // Our pair is newer than the file (its write failed): the file's refresh token is dead.
          if ((yield* Ref.get(state)).unsaved) return yield* rotate(used)
          const onDisk = yield* fromFile
          const now = yield* Clock.currentTimeMillis
          if (!sameRefresh(onDisk, used)) {
            const goodEnough = why === "expiring" ? !needsRefresh(onDisk, now) : !sameAccess(onDisk, used)
            if (goodEnough) return yield* adopt(onDisk)
          }
          return yield* rotate(onDisk)
        })
      )
    },
    (effect) => singleFlight.withPermit(effect)
  )

  /** Spends `base.refreshToken`: the request and storing its answer are one uninterruptible step. */
  const rotate = Effect.fnUntraced(function* (base: StoredTokens) {
    const answer = yield* Effect.result(
      oauth.token({ grantType: "refresh_token", refreshToken: base.refreshToken, clientId: base.clientId })
    )
    if (answer._tag === "Failure") {
      const reason = answer.failure.reason
      if (reason._tag === "OAuth" && (reason.error === "invalid_grant" || reason.status === 401)) {
        return yield* fail(
          new LoginRequired({
            reason: "refresh_rejected",
            detail: `the service refused the refresh token (${reason.error})`
          })
        )
      }
      return yield* answer.failure
    }
    const next = toStoredTokens(answer.success, {
      authUrl: base.authUrl,
      clientId: base.clientId,
      scopes: base.scopes,
      nowMs: yield* Clock.currentTimeMillis
    })
    const saved = yield* Effect.result(store.write(next))
    if (saved._tag === "Failure") {
      // The old refresh token is dead: keep the new pair in memory and keep trying to save it.
      yield* Effect.logError("cannot store the rotated tokens; a restart will need `dlsync login`").pipe(
        Effect.annotateLogs({ error: saved.failure.message })
      )
    }
    yield* Ref.set(state, { tokens: Option.some(next), problem: Option.none(), unsaved: saved._tag === "Failure" })
    return next
  }, Effect.uninterruptible)

  /** The pair to use now, reading the file again while signed out or refused. */
  const currentTokens = Effect.gen(function* () {
    const s = yield* Ref.get(state)
    if (Option.isSome(s.tokens) && Option.isNone(s.problem)) return s.tokens.value
    const fresh = yield* fromFile
    if (Option.isSome(s.problem) && Option.isSome(s.tokens) && sameRefresh(fresh, s.tokens.value)) {
      return yield* Effect.fail(s.problem.value) // still the refused pair
    }
    return yield* adopt(fresh)
  })

  const bearer: Effect.Effect<Redacted.Redacted<string>, ApiError> = Effect.gen(function* () {
    yield* saveIfUnsaved
    const tokens = yield* currentTokens
    const now = yield* Clock.currentTimeMillis
    if (!needsRefresh(tokens, now)) return tokens.accessToken
    const refreshed = yield* Effect.result(refresh(tokens, "expiring"))
    if (refreshed._tag === "Success") return refreshed.success.accessToken
    const error = refreshed.failure
    // A failed early refresh is harmless while the token still works; a refusal is not.
    if (error._tag !== "LoginRequired" && now < tokens.expiresAtMs) {
      yield* Effect.logWarning("token refresh failed; the current token still works").pipe(
        Effect.annotateLogs({ error: error.message })
      )
      return tokens.accessToken
    }
    return yield* Effect.fail(error)
  }).pipe(
    Effect.catchTag("TokenStoreError", Effect.die),
    Effect.mapError(toApiError),
    Effect.withSpan("OAuthCredentials.bearer")
  )

  const refreshAfterUnauthorized = Effect.fn("OAuthCredentials.refreshAfterUnauthorized")(
    function* (used: Redacted.Redacted<string>) {
      const tokens = yield* currentTokens
      if (Redacted.value(tokens.accessToken) !== Redacted.value(used)) return true
      const next = yield* refresh(tokens, "unauthorized")
      return Redacted.value(next.accessToken) !== Redacted.value(used)
    },
    Effect.catchTag("TokenStoreError", Effect.die),
    Effect.mapError(toApiError)
  )

  const loginRequired = Ref.get(state).pipe(Effect.map((s) => s.problem))

  return { bearer, refreshAfterUnauthorized, loginRequired }
})

const classify = (read: Option.Option<StoredTokens>, context: OAuthContext): SessionState => {
  if (Option.isNone(read)) {
    return {
      tokens: Option.none(),
      problem: Option.some(new LoginRequired({ reason: "not_signed_in", detail: "not signed in" })),
      unsaved: false
    }
  }
  if (read.value.authUrl !== context.authUrl) {
    return {
      tokens: Option.none(),
      problem: Option.some(
        new LoginRequired({
          reason: "other_service",
          detail: `the stored sign-in is for ${read.value.authUrl}, not ${context.authUrl}`
        })
      ),
      unsaved: false
    }
  }
  return { tokens: read, problem: Option.none(), unsaved: false }
}

const sameRefresh = (a: StoredTokens, b: StoredTokens): boolean =>
  Redacted.value(a.refreshToken) === Redacted.value(b.refreshToken)

const sameAccess = (a: StoredTokens, b: StoredTokens): boolean =>
  Redacted.value(a.accessToken) === Redacted.value(b.accessToken)

/**
 * The Credentials seam speaks ApiError: LoginRequired travels as `login_required`. A token
 * file that cannot be read or written is an infrastructure failure and becomes a defect.
 */
const toApiError = (e: ApiError | LoginRequired): ApiError =>
  e._tag === "LoginRequired" ? loginRequiredAsApiError(e) : e
