/**
 * The app's queue item of a download, by its download id: GET queue, page by page as the API
 * pages (Queue/QueueController.cs `GetQueue`, Sonarr.Http/PagingResource.cs: `page` from 1,
 * `pageSize`, `totalRecords`), with the flag that lists items the app could not match too.
 * A torrent's download id is its info-hash, uppercased by the app (Download/Clients/
 * QBittorrent/QBittorrent.cs); ids are compared without regard to case.
 */
import { Effect } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import type { ArrTarget } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { arrRequest } from "./arrRequest.ts"
import { QueuePage, type QueueRecord } from "./arrSchemas.ts"

export const QUEUE_PAGE_SIZE = 100
/** A queue longer than this many pages is not searched further (50,000 items). */
const MAX_PAGES = 500

export const findQueueItem = Effect.fnUntraced(function* (
  target: ArrTarget,
  downloadId: string
): Effect.fn.Return<QueueRecord | undefined, ArrError, Outbound> {
  const wanted = downloadId.toUpperCase()
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = yield* arrRequest(
      target,
      {
        method: "GET",
        path: "/queue",
        query: {
          page: String(page),
          pageSize: String(QUEUE_PAGE_SIZE),
          [target.app.unknownItemsParam]: "true"
        }
      },
      QueuePage
    )
    const found = answer.records.find((r) => r.downloadId?.toUpperCase() === wanted)
    if (found !== undefined) return found
    if (answer.records.length === 0 || page * answer.pageSize >= answer.totalRecords) return undefined
  }
  return undefined
})
