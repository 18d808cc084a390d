/**
 * The account the daemon is signed in to (its name and e-mail, GET /account), for the web
 * page's "signed in as". Read without waiting: the last answer, asked again in the
 * background once it is older than REFRESH (or never came); null until the service first
 * answers. A failed request leaves what was known.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"

export const REFRESH_MS = 10 * 60_000

export interface AccountName {
  readonly name: string
  readonly email: string
}

export class SignedInAccount extends Context.Service<
  SignedInAccount,
  { readonly current: Effect.Effect<AccountName | null> }
>()("dlsync/engine/SignedInAccount") {
  static readonly layer: Layer.Layer<SignedInAccount, never, ApiClient> = Layer.effect(
    SignedInAccount,
    Effect.gen(function* () {
      const client = yield* ApiClient
      const scope = yield* Effect.scope
      let known: AccountName | null = null
      let askedAt = Number.NEGATIVE_INFINITY
      const refresh = client.account.get.pipe(
        Effect.tap((account) =>
          Effect.sync(() => {
            known = { name: account.name, email: account.email }
          })
        ),
        Effect.ignore
      )
      const current = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (now - askedAt >= REFRESH_MS) {
          askedAt = now
          yield* Effect.forkIn(refresh, scope)
        }
        return known
      })
      return SignedInAccount.of({ current })
    })
  )
}
