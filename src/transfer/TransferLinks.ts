/**
 * Where download links come from: POST /files/{file}/download-link through the API client
 * (wired by the mirror engine). The transfer engine reuses a link until shortly before
 * its expiry (`linkUsable`) and asks again after a CDN refusal.
 */
import { Context, type Effect, Schema } from "effect"
import type { FileId } from "../domain/FileId.ts"

export interface DownloadLink {
  readonly url: string
  readonly expiresAt: Date
}

/**
 * No link could be had. `locked` and `not-found` park the file at once (a locked file
 * gets no further link request on this pass); `unavailable` is retried with backoff;
 * `rate-limited` (the service's 429) waits `retryAfterMillis` and never counts as an attempt.
 */
export class LinkError extends Schema.TaggedError<LinkError>()("LinkError", {
  fileId: Schema.String,
  reason: Schema.Literals(["locked", "not-found", "unavailable", "rate-limited"]),
  message: Schema.String,
  /** For `rate-limited`: the time left until the service takes link requests again. */
  retryAfterMillis: Schema.optionalKey(Schema.Number)
}) {}

export class TransferLinks extends Context.Service<
  TransferLinks,
  { readonly getLink: (fileId: FileId) => Effect.Effect<DownloadLink, LinkError> }
>()("dlsync/transfer/TransferLinks") {}

/**
 * True while a link obtained at `obtainedAt` may still be used at `now`: it must have more
 * than `marginMs` left, or a quarter of its lifetime for short-lived links.
 */
export const linkUsable = (link: DownloadLink, obtainedAt: number, now: number, marginMs: number): boolean => {
  const expires = link.expiresAt.getTime()
  const margin = Math.min(marginMs, Math.max(0, expires - obtainedAt) / 4)
  return expires - now > margin
}
