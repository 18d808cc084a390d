/**
 * Where the bearer comes from. The client never looks inside: it asks for the current
 * credential before each request and, after a 401, asks whether a fresh one exists (then
 * it sends the request once more). A personal API key cannot be refreshed; OAuth tokens
 * (a later provider) implement the same service.
 */
import { Context, Effect, Layer, type Redacted } from "effect"
import type { ApiError } from "./ApiError.ts"

export class Credentials extends Context.Service<
  Credentials,
  {
    /** The bearer to send now. */
    readonly bearer: Effect.Effect<Redacted.Redacted<string>, ApiError>
    /**
     * Called after a 401 answered a request sent with `used`. Returns true when a different,
     * fresh credential is now available (the request is then sent once more with it).
     */
    refreshAfterUnauthorized(used: Redacted.Redacted<string>): Effect.Effect<boolean, ApiError>
  }
>()("dlsync/api/Credentials") {
  /** A personal API key: always the same bearer, never refreshable. */
  static readonly apiKey = (key: Redacted.Redacted<string>): Layer.Layer<Credentials> =>
    Layer.succeed(
      Credentials,
      Credentials.of({ bearer: Effect.succeed(key), refreshAfterUnauthorized: () => Effect.succeed(false) })
    )
}
