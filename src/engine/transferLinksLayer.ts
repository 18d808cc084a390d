/**
 * Download links for the transfer engine: POST /files/{id}/download-link through the API
 * client, its failures sorted into the reasons the engine acts on (LinkError).
 */
import { Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import { LinkError, TransferLinks } from "../transfer/TransferLinks.ts"

export const transferLinksLayer: Layer.Layer<TransferLinks, never, ApiClient> = Layer.effect(
  TransferLinks,
  Effect.gen(function* () {
    const client = yield* ApiClient
    return TransferLinks.of({
      getLink: (fileId) =>
        client.files.downloadLink(fileId).pipe(
          Effect.map((link) => ({
            url: link.url,
            // No expiry given: usable until a CDN refusal asks for a fresh one.
            expiresAt: new Date(link.expires_at ?? "9999-12-31T23:59:59Z")
          })),
          Effect.mapError((error) => {
            const r = error.reason
            if (r._tag === "RateLimited") {
              return new LinkError({
                fileId,
                reason: "rate-limited",
                message: error.message,
                ...(r.retryAfterMillis === undefined ? {} : { retryAfterMillis: r.retryAfterMillis })
              })
            }
            const reason =
              r._tag === "NotFound"
                ? "not-found"
                : (r._tag === "Forbidden" || r._tag === "Conflict") && r.code === "resource_locked"
                  ? "locked"
                  : r._tag === "Conflict"
                    ? "not-found"
                    : "unavailable"
            return new LinkError({ fileId, reason, message: error.message })
          })
        )
    })
  })
)
