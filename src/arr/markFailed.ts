/**
 * Marks a queue item failed the way the app's own Queue page does with "Remove from
 * Download Client" and "Blocklist and Search": DELETE queue/{id}?removeFromClient=true
 * &blocklist=true&skipRedownload=false&changeCategory=false (Sonarr frontend/src/Activity/
 * Queue/useQueue.ts `useRemovalOptions`; Queue/QueueController.cs `RemoveAction` → `Remove`:
 * the client removes the item, then FailedDownloadService.MarkAsFailed blocklists the
 * release and, without skipRedownload, searches for another). The app's History page
 * "Mark as Failed" (History/HistoryController.cs POST history/failed/{id}) does the same
 * from a grab's history id, which the queue route needs no lookup for.
 * Removing from the client is dlsync's own qBittorrent surface deleting the intake: a failed
 * release has nothing worth keeping, and its tombstone keeps it from coming back.
 */
import { Effect, Schema } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import type { ArrTarget } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { arrRequest } from "./arrRequest.ts"

export const MARK_FAILED_QUERY = {
  removeFromClient: "true",
  blocklist: "true",
  skipRedownload: "false",
  changeCategory: "false"
} as const

export const markFailed = (target: ArrTarget, queueId: number): Effect.Effect<void, ArrError, Outbound> =>
  Effect.asVoid(
    arrRequest(target, { method: "DELETE", path: `/queue/${queueId}`, query: MARK_FAILED_QUERY }, Schema.Unknown)
  )
