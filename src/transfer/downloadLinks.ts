/** Download links for the engine: cached per file until near expiry, link errors as faults. */
import { Clock, Effect } from "effect"
import type { FileId } from "../domain/FileId.ts"
import { fault, type TransferFault } from "./TransferFault.ts"
import { type DownloadLink, type LinkError, linkUsable } from "./TransferLinks.ts"
import type { Deps } from "./transferState.ts"

export const linkFor = Effect.fnUntraced(function* (
  deps: Deps,
  fileId: FileId
): Effect.fn.Return<DownloadLink, TransferFault> {
  const now = yield* Clock.currentTimeMillis
  const cached = deps.linkCache.get(fileId)
  if (cached !== undefined && linkUsable(cached.link, cached.obtainedAt, now, deps.options.linkMarginMs)) {
    return cached.link
  }
  const link = yield* deps.links.getLink(fileId).pipe(Effect.mapError(linkFault))
  if (!URL.canParse(link.url)) return yield* fault("fatal", "the service gave an invalid link")
  deps.linkCache.set(fileId, { link, obtainedAt: yield* Clock.currentTimeMillis })
  return link
})

const linkFault = (e: LinkError): TransferFault =>
  e.reason === "rate-limited"
    ? fault(
        "rate-limited",
        `no download link: ${e.reason}: ${e.message}`,
        e.retryAfterMillis === undefined ? undefined : { retryAfterMillis: e.retryAfterMillis }
      )
    : fault(e.reason === "unavailable" ? "transient" : "fatal", `no download link: ${e.reason}: ${e.message}`)
