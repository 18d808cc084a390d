/**
 * Where the OAuth tokens live: `<state_dir>/oauth-tokens.json`, apart from the SQLite store
 * so a token rotation never waits on, or is lost with, a database transaction.
 *
 * Invariants:
 * - The file is 0600 in a 0700 directory and replaced atomically (atomicFile.ts): after a
 *   crash it holds either the previous pair or the new one, never a torn mix.
 * - Tokens are `Redacted` from the moment they are decoded; this module never logs them.
 * - `withLock` serializes refreshes across the processes sharing the state dir
 *   (fileLock.ts); inside it, a process must re-read the file before using its refresh token.
 * - A file with a wider mode (edited by hand) is narrowed back to 0600 when read.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { describeError } from "../fs/errno.ts"
import { TokenStoreError } from "./AuthError.ts"
import { readFileIfExists, removeFileDurably, writeFileAtomic } from "./atomicFile.ts"
import { DEFAULT_FILE_LOCK_OPTIONS, type FileLockOptions, withFileLock } from "./fileLock.ts"

export const TOKEN_FILE = "oauth-tokens.json"
export const TOKEN_LOCK_FILE = "oauth-tokens.lock"

/** One stored token pair and what it was issued for. */
export interface StoredTokens {
  readonly accessToken: Redacted.Redacted<string>
  readonly refreshToken: Redacted.Redacted<string>
  /** When the access token stops working (ms since the epoch, from `expires_in`). */
  readonly expiresAtMs: number
  /** `expires_in` of the answer that issued the pair, in seconds. */
  readonly lifetimeSeconds: number
  /** When the pair was issued (ms since the epoch). */
  readonly obtainedAtMs: number
  /** The service (`service.auth_url`) the pair belongs to: it is never sent anywhere else. */
  readonly authUrl: string
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
}

export class TokenStore extends Context.Service<
  TokenStore,
  {
    /** The token file, for messages. */
    readonly path: string
    /** The stored pair, or none when signed out. */
    readonly read: Effect.Effect<Option.Option<StoredTokens>, TokenStoreError>
    /** Replaces the stored pair durably (fsynced, renamed, directory fsynced) before returning. */
    write(tokens: StoredTokens): Effect.Effect<void, TokenStoreError>
    /** Forgets the tokens; false when there were none. */
    readonly clear: Effect.Effect<boolean, TokenStoreError>
    /** Runs `effect` holding the cross-process refresh lock. */
    withLock<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | TokenStoreError, R>
  }
>()("dlsync/auth/TokenStore") {
  static readonly layer = (
    stateDir: string,
    lockOptions: FileLockOptions = DEFAULT_FILE_LOCK_OPTIONS
  ): Layer.Layer<TokenStore> => Layer.succeed(TokenStore, makeTokenStore(stateDir, lockOptions))
}

export const makeTokenStore = (
  stateDir: string,
  lockOptions: FileLockOptions = DEFAULT_FILE_LOCK_OPTIONS
): TokenStore["Service"] => {
  const path = Path.join(stateDir, TOKEN_FILE)
  const lockFile = Path.join(stateDir, TOKEN_LOCK_FILE)
  const fail = (problem: string) => new TokenStoreError({ path, problem })
  return TokenStore.of({
    path,
    read: Effect.gen(function* () {
      const text = yield* Effect.try({
        try: () => {
          const content = readFileIfExists(path)
          if (content !== undefined) narrowMode(path)
          return content
        },
        catch: (e) => fail(`cannot read: ${describeError(e)}`)
      })
      if (text === undefined) return Option.none()
      const decoded = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(TokenFile))(text).pipe(
        Effect.mapError(() => fail("not a dlsync token file (run `dlsync logout`, then `dlsync login`)"))
      )
      return Option.some(fromFile(decoded))
    }),
    write: (tokens) =>
      Effect.try({
        try: () => writeFileAtomic(path, `${JSON.stringify(toFile(tokens), null, 2)}\n`),
        catch: (e) => fail(`cannot write: ${describeError(e)}`)
      }),
    clear: Effect.try({
      try: () => removeFileDurably(path),
      catch: (e) => fail(`cannot remove: ${describeError(e)}`)
    }),
    withLock: (effect) => withFileLock(lockFile, effect, lockOptions)
  })
}

// ---------------------------------------------------------------------------------------

/** The file's shape (format 1). Secrets are plain strings only inside this file. */
const TokenFile = Schema.Struct({
  format: Schema.Literal(1),
  auth_url: Schema.String,
  client_id: Schema.String,
  scopes: Schema.Array(Schema.String),
  access_token: Schema.String.check(Schema.isNonEmpty()),
  refresh_token: Schema.String.check(Schema.isNonEmpty()),
  expires_at_ms: Schema.Number,
  lifetime_seconds: Schema.Number,
  obtained_at_ms: Schema.Number
})
type TokenFile = typeof TokenFile.Type

const fromFile = (f: TokenFile): StoredTokens => ({
  accessToken: Redacted.make(f.access_token),
  refreshToken: Redacted.make(f.refresh_token),
  expiresAtMs: f.expires_at_ms,
  lifetimeSeconds: f.lifetime_seconds,
  obtainedAtMs: f.obtained_at_ms,
  authUrl: f.auth_url,
  clientId: f.client_id,
  scopes: f.scopes
})

const toFile = (t: StoredTokens): TokenFile => ({
  format: 1,
  auth_url: t.authUrl,
  client_id: t.clientId,
  scopes: t.scopes,
  access_token: Redacted.value(t.accessToken),
  refresh_token: Redacted.value(t.refreshToken),
  expires_at_ms: t.expiresAtMs,
  lifetime_seconds: t.lifetimeSeconds,
  obtained_at_ms: t.obtainedAtMs
})

const narrowMode = (path: string): void => {
  if ((Fs.statSync(path).mode & 0o077) !== 0) Fs.chmodSync(path, 0o600)
}
