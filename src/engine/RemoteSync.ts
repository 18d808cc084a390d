/**
 * Brings the store up to date with the account, in whichever mode the credential allows:
 * the change feed (OAuth) or listing (a personal API key, or any credential the feed
 * refuses with 401/403). The mode and why it is in use are kept in the store for `status`.
 *
 *   catchUp ─► mode changes ─► catchUpChanges ──(FeedRefused)──► mode listing
 *                  ▲                                                 │
 *                  └──── probe at start succeeds ◄── mode listing ───┤
 *                                                                    ├─ full: walkListing
 *                                                                    └─ else: pollListing
 *
 * A listing-mode store probes the feed once per process (one request with limit 1) so a
 * credential that gained the feed (after `dlsync login`) moves back to it.
 */
import { Context, Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { type ApiError, isAuthProblem } from "../api/ApiError.ts"
import { isLoginRequired } from "../auth/AuthError.ts"
import { Posters } from "../posters/Posters.ts"
import { nowIso } from "../store/columns.ts"
import { Store } from "../store/Store.ts"
import { type CatchUp, CHANGES_PARAMS, catchUpChanges, type FeedRefused, type OnPage } from "../sync/feed.ts"
import { LISTING_PARAMS, pollListing, walkListing } from "../sync/listing.ts"

export interface CatchUpOptions {
  /** Listing mode: walk everything (how deletions are seen) rather than poll for changes. */
  readonly fullListing: boolean
  /** Listing mode: ask the change feed whether it now accepts the credential. */
  readonly probeFeed: boolean
  readonly onPage?: OnPage
}

export interface CatchUpResult extends CatchUp {
  readonly mode: "changes" | "listing"
  readonly modeReason: string
}

export const FEED_REASON = "OAuth credential: following the change feed (GET /files/changes)"

export class RemoteSync extends Context.Service<
  RemoteSync,
  { readonly catchUp: (options: CatchUpOptions) => Effect.Effect<CatchUpResult, ApiError> }
>()("dlsync/engine/RemoteSync") {
  static readonly layer: Layer.Layer<RemoteSync, never, Store | ApiClient | Posters> = Layer.effect(
    RemoteSync,
    Effect.gen(function* () {
      const store = yield* Store
      const api = yield* ApiClient
      // Poster data only when posters are on (a change restarts the feed: the change feed's rule 8 in docs/download-service-api.md).
      const includePoster = (yield* Posters).enabled

      const listing = Effect.fnUntraced(function* (reason: string, options: CatchUpOptions) {
        const startedAt = yield* nowIso
        const state = yield* store.feed.begin({ ...LISTING_PARAMS, includePoster }, reason)
        const result =
          state.rebuild !== null || options.fullListing || !state.listingComplete
            ? yield* walkListing(
                store,
                api,
                state,
                "full listing (listing mode sees deletions only this way)",
                options.onPage
              )
            : yield* pollListing(store, api, state)
        yield* store.feed.recordPoll(startedAt)
        return { ...result, mode: "listing" as const, modeReason: reason }
      })

      const changes = Effect.fnUntraced(function* (options: CatchUpOptions) {
        const startedAt = yield* nowIso
        const state = yield* store.feed.begin({ ...CHANGES_PARAMS, includePoster }, FEED_REASON)
        const result = yield* catchUpChanges(store, api, state, options.onPage)
        yield* store.feed.recordPoll(startedAt)
        return { ...result, mode: "changes" as const, modeReason: FEED_REASON }
      })

      const catchUp = Effect.fn("RemoteSync.catchUp")(function* (
        options: CatchUpOptions
      ): Effect.fn.Return<CatchUpResult, ApiError> {
        const current = yield* store.feed.state
        if (current.params.mode === "listing") {
          const stay = options.probeFeed ? yield* feedRefusal(api) : current.modeReason
          if (stay !== undefined) return yield* listing(stay, options)
        }
        return yield* changes(options).pipe(
          Effect.catchTag("FeedRefused", (refused: FeedRefused) =>
            Effect.gen(function* () {
              const reason = `the change feed refused the credential (${refused.status}); mirroring by listing (a personal API key cannot read /files/changes)`
              // 403 is how the feed answers a personal API key: the documented mode, not a fault.
              yield* refused.status === 403 ? Effect.logInfo(reason) : Effect.logWarning(reason)
              return yield* listing(reason, options)
            })
          )
        )
      })

      return RemoteSync.of({ catchUp })
    })
  )
}

// ---------------------------------------------------------------------------------------

/** Why the feed cannot be used, or undefined when it now accepts the credential. */
const feedRefusal = (api: ApiClient["Service"]): Effect.Effect<string | undefined, ApiError> =>
  api.changes.page({ limit: 1 }).pipe(
    Effect.as(undefined),
    Effect.catchIf(
      (error) => isAuthProblem(error) && !isLoginRequired(error),
      (error) =>
        Effect.succeed(
          `the change feed refused the credential (${"status" in error.reason ? error.reason.status : "401"}); mirroring by listing (a personal API key cannot read /files/changes)`
        )
    )
  )
