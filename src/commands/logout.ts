/**
 * `dlsync logout` (cli/logout.ts): forgets the OAuth tokens stored in the state dir (under
 * the refresh lock, so a running daemon never reads half of it). A personal API key in the
 * configuration is not touched and stays in use.
 */
import { Console, Effect, Option } from "effect"
import { makeTokenStore } from "../auth/TokenStore.ts"
import { commandConfig } from "../cli/commandConfig.ts"

export const logout = Effect.fn("logout")(function* () {
  const config = yield* commandConfig
  const store = makeTokenStore(config.mirror.state_dir)
  const removed = yield* store.withLock(store.clear)
  yield* Console.log(
    removed ? `Signed out: removed ${store.path}.` : `Not signed in: there are no tokens at ${store.path}.`
  )
  if (Option.isSome(config.service.api_key)) {
    yield* Console.log("The personal API key from the configuration stays in use (app state stays off).")
  }
})
