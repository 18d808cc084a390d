/**
 * What the status document says of the mirror as a whole, derived from every remote item and
 * local entry (the remote tree mapped as the planner maps it): the part of the document whose
 * cost grows with the account (10,000 files: tens of milliseconds and more), so the daemon
 * keeps it until the store changes (`cachedMirrorSummary`).
 */
import { Clock, Effect } from "effect"
import type { Store } from "../store/Store.ts"
import { planConfigOf } from "../sync/planConfig.ts"
import { mapTree, unmatchedFilters } from "../sync/tree.ts"
import type { EngineSettingsShape } from "./EngineSettings.ts"

export interface MirrorSummary {
  readonly remote: { readonly items: number; readonly files: number; readonly folders: number }
  /** Local entries by state (synced, pending, failed). */
  readonly entries: Readonly<Record<string, number>>
  readonly bytes: { readonly mirrored: number; readonly pending: number }
  /** Paths of in-scope files locked on the remote. */
  readonly locked: ReadonlyArray<string>
  /** In-scope items whose local name is shortened so that their paths fit PATH_MAX (tree.ts). */
  readonly shortened: ReadonlyArray<{ readonly path: string; readonly remoteId: string; readonly name: string }>
  /** Filters that select nothing in the last complete listing (a likely typo). */
  readonly filterWarnings: ReadonlyArray<string>
  /** Local entries whose last attempt failed. */
  readonly failedEntries: ReadonlyArray<{
    readonly path: string
    readonly remoteId: string
    readonly attempts: number
    readonly reason: string
  }>
}

export const mirrorSummary = Effect.fnUntraced(function* (store: Store["Service"], settings: EngineSettingsShape) {
  const feed = yield* store.feed.state
  const remote = yield* store.remote.all
  const entries = yield* store.local.all
  const markers = yield* store.local.locallyDeleted

  const byState: Record<string, number> = { synced: 0, pending: 0, failed: 0 }
  let mirrored = 0
  const syncedSize = new Map<string, number>()
  const entryPaths = new Map<string, string>()
  const failedEntries: Array<MirrorSummary["failedEntries"][number]> = []
  for (const e of entries) {
    byState[e.state] = (byState[e.state] ?? 0) + 1
    entryPaths.set(e.remoteId, e.path)
    if (e.type === "file" && e.state === "synced" && e.written !== null) {
      mirrored += e.written.size
      syncedSize.set(e.remoteId, e.remote.size)
    }
    if (e.state === "failed") {
      failedEntries.push({ path: e.path, remoteId: e.remoteId, attempts: e.attempts, reason: e.lastError ?? "unknown" })
    }
  }
  const deletedIds = new Set(markers.map((m) => m.remoteId))
  // The names (and so which are shortened) depend on whether the root ignores case, as the
  // last pass found it; a shortened item is shown at the path its entry records.
  const config = planConfigOf(settings.mirror, (yield* store.mirrorRoot.caseInsensitive) ?? false)
  const tree = mapTree(remote, config)
  let pending = 0
  let files = 0
  const locked: Array<string> = []
  const shortened: Array<MirrorSummary["shortened"][number]> = []
  for (const placed of tree.placed) {
    const item = placed.item
    if (placed.shortened && placed.filtered === null) {
      shortened.push({ path: entryPaths.get(item.id) ?? placed.path, remoteId: item.id, name: item.name })
    }
    if (placed.filtered !== null || item.type !== "file" || deletedIds.has(item.id)) continue
    if (item.locked) locked.push(placed.path)
    else if (syncedSize.get(item.id) !== item.size) pending += item.size
  }
  for (const item of remote) if (item.type === "file") files++
  const summary: MirrorSummary = {
    remote: { items: remote.length, files, folders: remote.length - files },
    entries: byState,
    bytes: { mirrored, pending },
    locked,
    shortened,
    filterWarnings: feed.listingComplete ? unmatchedFilters(tree, config) : [],
    failedEntries
  }
  return summary
})

/**
 * A kept summary is walked again at most this often while the store keeps changing (a
 * 10,000-file walk costs the daemon 0.5–1 s of CPU): numbers are at most this stale.
 */
export const SUMMARY_MIN_AGE_MS = 2_000

/**
 * mirrorSummary, kept until the store changes (its version, storeVersion.ts), walked again at
 * most every SUMMARY_MIN_AGE_MS: the daemon's status server answers a page opened on an
 * unchanged mirror without walking it, and a busy mirror costs at most one walk per interval.
 */
export const cachedMirrorSummary = (
  store: Store["Service"],
  settings: EngineSettingsShape
): Effect.Effect<MirrorSummary> => {
  let kept: { readonly version: string; readonly at: number; readonly summary: MirrorSummary } | undefined
  return Effect.gen(function* () {
    const version = yield* store.version
    const now = yield* Clock.currentTimeMillis
    if (kept !== undefined && (kept.version === version || now - kept.at < SUMMARY_MIN_AGE_MS)) return kept.summary
    // Read before the walk: a change during it makes the next call walk again.
    const summary = yield* mirrorSummary(store, settings)
    kept = { version, at: now, summary }
    return summary
  })
}
