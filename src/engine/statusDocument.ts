/**
 * The status document (`dlsync status --json`, `/api/status`, every number of the web page):
 * read from the store alone, so it tells the truth after a restart and while another dlsync
 * runs; the daemon's status server adds what only it knows (`daemon`).
 */
import * as Fs from "node:fs"
import { DateTime, Effect } from "effect"
import { formatDuration } from "../config/units.ts"
import { type IntakeStatus, intakeStatus, renderIntake } from "../intake/intakeStatus.ts"
import { releaseItems } from "../intake/releaseItems.ts"
import { liveLockHolder } from "../store/instanceLock.ts"
import type { IntakeTables } from "../store/intakeTables.ts"
import type { PassFailure, Store } from "../store/Store.ts"
import { fullListingInterval, LISTING_REQUESTS_PER_HOUR, listingCostOf } from "../sync/listingCadence.ts"
import { formatBytes } from "../transfer/progressFormat.ts"
import type { ControlState } from "./DaemonControl.ts"
import type { EngineSettingsShape } from "./EngineSettings.ts"
import { type MirrorSummary, mirrorSummary } from "./mirrorSummary.ts"
import { renderTransfers, type TransfersStatus, transfersStatus } from "./transfersStatus.ts"

export interface StatusDocument {
  readonly root: string
  readonly stateDir: string
  readonly mode: { readonly name: "changes" | "listing"; readonly reason: string }
  readonly listing: {
    readonly complete: boolean
    readonly generation: number
    readonly rebuild: { readonly generation: number; readonly reason: string } | null
  }
  readonly remote: { readonly items: number; readonly files: number; readonly folders: number }
  /** Local entries by state (synced, pending, failed). */
  readonly entries: Readonly<Record<string, number>>
  readonly bytes: { readonly mirrored: number; readonly pending: number }
  /** What the running dlsync is transferring now (see transfersStatus.ts). */
  readonly transfers: TransfersStatus
  /** The intake queue: what the apps, blackhole folders and `dlsync add` sent (src/intake/intakeStatus.ts). */
  readonly intake: IntakeStatus
  readonly cursor: { readonly present: boolean; readonly ageSeconds: number | null }
  readonly lastPollAt: string | null
  /** The daemon's poll interval: the next poll is due about this long after the last (±10 %), or sooner. */
  readonly pollIntervalSeconds: number
  /** When the last pass ended, and the last one that left the mirror in line (no failure, nothing held). */
  readonly passes: { readonly lastAt: string | null; readonly lastSuccessAt: string | null }
  /** Free space on the mirror root's file system; null when it cannot be read. */
  readonly disk: { readonly freeBytes: number | null }
  /** What the last pass left unmirrored; `remoteId` names the remote item, when there is one (a retry names it). */
  readonly failures: ReadonlyArray<{
    readonly path: string
    readonly remoteId: string | null
    readonly attempts: number
    readonly reason: string
  }>
  readonly locked: ReadonlyArray<string>
  readonly heldDelete: { readonly count: number; readonly since: string; readonly paths: ReadonlyArray<string> } | null
  readonly locallyDeleted: ReadonlyArray<string>
  /** In-scope items whose local name is shortened so that their paths fit PATH_MAX (tree.ts). */
  readonly shortened: ReadonlyArray<{ readonly path: string; readonly remoteId: string; readonly name: string }>
  /** Filters that select nothing in the last complete listing (a likely typo). */
  readonly filterWarnings: ReadonlyArray<string>
  readonly recentProblems: ReadonlyArray<{ readonly at: string; readonly kind: string; readonly message: string }>
  /** The event log's newest entries (RECENT_EVENTS, newest last), folder creations left out: what the mirror did. */
  readonly recentEvents: ReadonlyArray<{
    readonly at: string
    readonly level: string
    readonly kind: string
    readonly path: string | null
    readonly message: string
  }>
  /** App-state entries not yet written to the service (OAuth): the next run or the daemon writes them. */
  readonly appState: { readonly queued: number }
  /**
   * Listing mode: how long a remote deletion may take to reach the mirror while the daemon
   * runs (the full-listing cadence, see sync/listingCadence.ts); null in changes mode.
   */
  readonly remoteDeletionsNoticedWithinSeconds: number | null
  /** "login required" from the moment the daemon's sign-in was refused until it works again. */
  readonly signIn: { readonly state: "ok" | "login required"; readonly since: string | null }
  /** What only the running daemon knows, in its `/api/status`; null from `dlsync status`. */
  readonly daemon: DaemonStatus | null
}

/** The daemon's own state: the owner's controls in force and the account it is signed in to. */
export interface DaemonStatus {
  readonly controls: ControlState
  /** The account the daemon is signed in to, once the service said; null before. */
  readonly account: { readonly name: string; readonly email: string } | null
}

/** The event a reconcile records when it ends (MirrorPass). */
export const PASS_EVENT = "pass"

/** How many of the event log's newest entries the document lists. */
export const RECENT_EVENTS = 100

/** Event kinds the daemon records when its sign-in is refused, and when it works again. */
export const LOGIN_REQUIRED_EVENT = "login_required"
export const SIGNED_IN_EVENT = "signed_in"

/** Records that the sign-in was refused, or works again, for `status` (the daemon and `run --once`). */
export const recordSignInEvent = (store: Store["Service"], state: StatusDocument["signIn"]["state"]) =>
  store.events.append(
    state === "ok"
      ? { level: "info", kind: SIGNED_IN_EVENT, message: "signed in again", path: null, remoteId: null }
      : {
          level: "error",
          kind: LOGIN_REQUIRED_EVENT,
          message: "login required: run `dlsync login`; the mirror is kept as it is until then",
          path: null,
          remoteId: null
        }
  )

export interface StatusOptions {
  /** The mirror's summary; default: walked now (the daemon passes `cachedMirrorSummary`). */
  readonly summary?: Effect.Effect<MirrorSummary>
  /** What only the running daemon knows (its status server); null elsewhere. */
  readonly daemon?: Effect.Effect<DaemonStatus>
}

export const statusDocument = Effect.fnUntraced(function* (
  store: Store["Service"],
  settings: EngineSettingsShape,
  /** The intake queue's records; without them the section is empty. */
  intakes?: IntakeTables["Service"],
  options: StatusOptions = {}
) {
  const summary = yield* options.summary ?? mirrorSummary(store, settings)
  const feed = yield* store.feed.state
  const markers = yield* store.local.locallyDeleted
  const held = yield* store.held.list
  const passFailures = yield* store.passFailures.list
  const events = yield* store.events.recent(200)
  const published = yield* store.liveTransfers.read
  const intakeRecords = intakes === undefined ? [] : yield* intakes.live
  const releases = yield* releaseItems(intakeRecords, {
    store,
    root: settings.root,
    now: DateTime.toEpochMillis(yield* DateTime.now),
    withFiles: false
  })
  const appStateQueued = yield* store.appStateQueued
  const holderPid = yield* Effect.sync(() => liveLockHolder(settings.stateDir))
  const now = DateTime.toEpochMillis(yield* DateTime.now)
  const daemon = options.daemon === undefined ? null : yield* options.daemon

  const document: StatusDocument = {
    root: settings.root,
    stateDir: settings.stateDir,
    mode: { name: feed.params.mode, reason: feed.modeReason },
    listing: { complete: feed.listingComplete, generation: feed.generation, rebuild: feed.rebuild },
    remote: summary.remote,
    entries: summary.entries,
    bytes: summary.bytes,
    transfers: transfersStatus(published, holderPid, now),
    intake: intakeStatus(releases),
    cursor: {
      present: feed.cursor !== null,
      ageSeconds: feed.cursorUpdatedAt === null ? null : Math.round((now - Date.parse(feed.cursorUpdatedAt)) / 1000)
    },
    lastPollAt: feed.lastPollAt,
    pollIntervalSeconds: Math.round(settings.pollInterval / 1000),
    passes: {
      lastAt: events.findLast((e) => e.kind === PASS_EVENT)?.at ?? null,
      lastSuccessAt: events.findLast((e) => e.kind === PASS_EVENT && e.level === "info")?.at ?? null
    },
    disk: { freeBytes: yield* freeBytesOf(settings.root) },
    failures: failuresOf(summary.failedEntries, passFailures),
    locked: summary.locked,
    heldDelete:
      held.length === 0 ? null : { count: held.length, since: held[0]?.heldAt ?? "", paths: held.map((h) => h.path) },
    locallyDeleted: markers.map((m) => m.path),
    shortened: summary.shortened,
    filterWarnings: summary.filterWarnings,
    recentProblems: events
      .filter((e) => e.level !== "info")
      .slice(-20)
      .map((e) => ({ at: e.at, kind: e.kind, message: e.path === null ? e.message : `${e.path}: ${e.message}` })),
    recentEvents: events
      .filter((e) => e.kind !== "mkdir")
      .slice(-RECENT_EVENTS)
      .map((e) => ({ at: e.at, level: e.level, kind: e.kind, path: e.path, message: e.message })),
    appState: { queued: appStateQueued },
    remoteDeletionsNoticedWithinSeconds:
      feed.params.mode === "listing" ? deletionLatencySeconds(summary.remote.items, settings) : null,
    signIn: signInState(events),
    daemon
  }
  return document
})

/** The human rendering of the document. */
export const renderStatus = (doc: StatusDocument): string => {
  const lines: Array<string> = []
  lines.push(`root:            ${doc.root}`)
  lines.push(`mode:            ${doc.mode.name} (${doc.mode.reason})`)
  if (doc.signIn.state === "login required") {
    lines.push(`sign-in:         LOGIN REQUIRED since ${doc.signIn.since} — run \`dlsync login\``)
  }
  if (doc.remoteDeletionsNoticedWithinSeconds !== null) {
    lines.push(
      `deletions:       remote deletions are noticed within ~${formatDuration(doc.remoteDeletionsNoticedWithinSeconds * 1000)} (by a full listing, while the daemon runs)`
    )
  }
  lines.push(
    `listing:         ${doc.listing.complete ? "complete" : "incomplete"}${doc.listing.rebuild === null ? "" : ` (full listing under way: ${doc.listing.rebuild.reason})`}`
  )
  lines.push(`remote:          ${doc.remote.files} files, ${doc.remote.folders} folders`)
  lines.push(
    `local:           ${Object.entries(doc.entries)
      // Failed: what the last pass left unmirrored, failed entries included (see failuresOf).
      .map(([k, v]) => `${k === "failed" ? Math.max(v, doc.failures.length) : v} ${k}`)
      .join(", ")}`
  )
  lines.push(`bytes:           ${formatBytes(doc.bytes.mirrored)} mirrored, ${formatBytes(doc.bytes.pending)} pending`)
  lines.push(...renderTransfers(doc.transfers))
  lines.push(...renderIntake(doc.intake))
  lines.push(`cursor age:      ${doc.cursor.ageSeconds === null ? "none" : `${doc.cursor.ageSeconds} s`}`)
  lines.push(`last poll:       ${doc.lastPollAt ?? "never"}`)
  if (doc.appState.queued > 0) {
    lines.push(`app state:       ${doc.appState.queued} entries queued, written by the next run or the daemon`)
  }
  if (doc.heldDelete !== null) {
    lines.push(
      `BIG DELETE HELD: ${doc.heldDelete.count} files since ${doc.heldDelete.since}; run \`dlsync run --once --allow-big-delete\` to go ahead`
    )
  }
  const list = (title: string, items: ReadonlyArray<string>) => {
    if (items.length === 0) return
    lines.push(`${title} (${items.length}):`)
    for (const item of items.slice(0, 50)) lines.push(`  ${item}`)
    if (items.length > 50) lines.push(`  … and ${items.length - 50} more (see --json)`)
  }
  list(
    "failures",
    doc.failures.map((f) => `${f.path}: ${f.reason} (${f.attempts} attempts)`)
  )
  list("locked on the remote", doc.locked)
  list("deleted locally (dlsync restore PATH brings one back)", doc.locallyDeleted)
  list("filters that select nothing", doc.filterWarnings)
  list(
    "shortened names (the full path would pass PATH_MAX)",
    doc.shortened.map((s) => `${s.path} (remote name: ${s.name})`)
  )
  list(
    "recent problems",
    doc.recentProblems.map((p) => `${p.at} ${p.kind}: ${p.message}`)
  )
  return lines.join("\n")
}

/** The daemon's full-listing interval for an account of `items`, in seconds. */
const deletionLatencySeconds = (items: number, settings: EngineSettingsShape): number =>
  Math.round(
    fullListingInterval({
      cost: listingCostOf(items),
      pollInterval: settings.pollInterval,
      maxInterval: settings.listingInterval,
      requestsPerHour: LISTING_REQUESTS_PER_HOUR
    }) / 1000
  )

/**
 * Failed local entries, and what else the last reconcile left unmirrored (occupied paths,
 * blocked parents, failed local operations): what `run --once` listed, one row per path.
 */
const failuresOf = (
  failed: MirrorSummary["failedEntries"],
  passFailures: ReadonlyArray<PassFailure>
): StatusDocument["failures"] => {
  const listed = new Set(failed.map((f) => f.path))
  const others = passFailures
    .filter((f) => !listed.has(f.path))
    .map((f) => ({ path: f.path, remoteId: f.remoteId, attempts: 1, reason: f.reason }))
  return [...failed, ...others]
}

/** The sign-in state the newest sign-in event tells; "ok" when there is none. */
export const signInState = (
  events: ReadonlyArray<{ readonly kind: string; readonly at: string }>
): StatusDocument["signIn"] => {
  const last = events.findLast((e) => e.kind === LOGIN_REQUIRED_EVENT || e.kind === SIGNED_IN_EVENT)
  return last?.kind === LOGIN_REQUIRED_EVENT
    ? { state: "login required", since: last.at }
    : { state: "ok", since: null }
}

/** Free bytes of the file system holding `root` (statfs, off the event loop); null when unreadable. */
const freeBytesOf = (root: string): Effect.Effect<number | null> =>
  Effect.promise(() =>
    Fs.promises.statfs(root).then(
      (s) => s.bavail * s.bsize,
      () => null
    )
  )
