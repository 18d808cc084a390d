/**
 * The Store: dlsync's durable truth, grouped by concern (feed, remote, local, held, events),
 * and the live transfers the running dlsync publishes for `status` (liveTransfers.ts).
 * Plain synchronous better-sqlite3 calls; a failing SQLite call is a defect (the caller
 * cannot act on it), rows are decoded with Schema at this boundary.
 *
 * Invariants:
 * - A feed page and the cursor that follows it commit in ONE transaction; re-applying a page
 *   is harmless (upserts and deletes by id; the last record for an id wins).
 * - Remote rows not seen by a full listing are removed only in the transaction that
 *   completes that listing; a crash mid-listing keeps them and resumes the listing.
 * - The cursor is valid only for the query parameters stored beside it; `begin` with other
 *   parameters discards it and starts a rebuild.
 * - A remote id has at most one local entry; moving a folder entry moves all below it.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import type { LocalEntry, LocalEntryState, LocallyDeleted, RemoteChange, RemoteItem } from "../sync/model.ts"
import { Database } from "./Database.ts"
import { type LiveTransfersStore, makeLiveTransfers } from "./liveTransfers.ts"

export interface FeedParams {
  /** `changes`: GET /files/changes; `listing`: full GET /files walks (API keys, see the issue). */
  readonly mode: "changes" | "listing"
  readonly kind: string | null
  readonly includeMedia: boolean
  readonly includePoster: boolean
}

export interface FeedState {
  readonly params: FeedParams
  /** Why this mode is in use, for `status`. */
  readonly modeReason: string
  readonly cursor: string | null
  readonly cursorUpdatedAt: string | null
  /** The last completed full listing; 0 when none has completed yet. */
  readonly generation: number
  /** A full listing under way, resumed from `cursor` after a crash. */
  readonly rebuild: { readonly generation: number; readonly reason: string } | null
  /** The highest updated_at applied, for `updated_after` polls in listing mode. */
  readonly watermark: string | null
  readonly lastPollAt: string | null
  /** A complete listing with the current parameters backs the store: deletions may be derived. */
  readonly listingComplete: boolean
}

export interface FeedPage {
  readonly changes: ReadonlyArray<RemoteChange>
  readonly nextCursor: string | null
  /** False on the last page: a rebuild under way completes with this page. */
  readonly hasMore: boolean
}

export interface PageOutcome {
  readonly upserted: number
  readonly deleted: number
  /** Set when this page completed a rebuild. */
  readonly completedGeneration: number | null
  /** Rows the completed listing did not contain, removed with it. */
  readonly removedUnlisted: number
}

export type EventLevel = "info" | "warn" | "error"

/** An item a reconcile left unmirrored, as `run --once` lists it. */
export interface PassFailure {
  readonly path: string
  readonly remoteId: string | null
  readonly reason: string
}

export interface StoreEvent {
  readonly level: EventLevel
  readonly kind: string
  readonly message: string
  readonly path: string | null
  readonly remoteId: string | null
}

export interface RecordedEvent extends StoreEvent {
  readonly seq: number
  readonly at: string
}

/** A local operation the executor started; `ino` identifies what it moves or removes. */
export interface PendingOp {
  readonly op: "rename" | "conflict_copy" | "trash" | "delete"
  readonly remoteId: string
  readonly from: string
  /** The destination of a rename or conflict copy; null for trash and delete. */
  readonly to: string | null
  readonly ino: bigint
}

/** How many events the log keeps. */
export const EVENTS_KEPT = 10_000

export class Store extends Context.Service<
  Store,
  {
    readonly feed: {
      readonly state: Effect.Effect<FeedState>
      /** Declares the parameters of this run; other parameters than the cursor's restart the feed. */
      readonly begin: (params: FeedParams, modeReason: string) => Effect.Effect<FeedState>
      /** Discards the cursor and starts a full listing into a new generation (410, 422, a walk). */
      readonly rebuild: (reason: string) => Effect.Effect<FeedState>
      /** Applies one page and commits its next cursor, in one transaction. */
      readonly applyPage: (page: FeedPage) => Effect.Effect<PageOutcome>
      readonly recordPoll: Effect.Effect<void>
    }
    readonly remote: {
      readonly all: Effect.Effect<ReadonlyArray<RemoteItem>>
      readonly get: (id: string) => Effect.Effect<Option.Option<RemoteItem>>
      readonly count: Effect.Effect<number>
    }
    readonly local: {
      readonly all: Effect.Effect<ReadonlyArray<LocalEntry>>
      readonly count: Effect.Effect<number>
      readonly byPath: (path: string) => Effect.Effect<Option.Option<LocalEntry>>
      readonly byRemoteId: (remoteId: string) => Effect.Effect<Option.Option<LocalEntry>>
      /** Records an entry, replacing the one at its path and any other entry of its remote id. */
      readonly put: (entry: LocalEntry) => Effect.Effect<void>
      readonly remove: (path: string) => Effect.Effect<void>
      /**
       * Re-keys the entry at `from` and every entry below it to `to` (a rename on disk). Entries
       * already at or below `to` are stale (the executor saw nothing there) and are dropped.
       */
      readonly move: (from: string, to: string) => Effect.Effect<void>
      /** Drops the entry of `remoteId` and remembers the item as deleted by the user. */
      readonly markDeleted: (marker: LocallyDeleted) => Effect.Effect<void>
      readonly locallyDeleted: Effect.Effect<ReadonlyArray<LocallyDeleted>>
      /** Forgets the deletion markers at or below `path` (dlsync restore); returns how many. */
      readonly restore: (path: string) => Effect.Effect<number>
      /** Forgets every deletion marker (dlsync restore . : the whole mirror); returns how many. */
      readonly restoreAll: Effect.Effect<number>
      readonly forgetMarker: (remoteId: string) => Effect.Effect<void>
    }
    /** The local operation under way (see migrations.ts, pending_op). */
    readonly pendingOp: {
      readonly get: Effect.Effect<Option.Option<PendingOp>>
      readonly begin: (op: PendingOp) => Effect.Effect<void>
      readonly clear: Effect.Effect<void>
    }
    readonly held: {
      /** Replaces the held big delete (an empty list clears it). */
      readonly replace: (paths: ReadonlyArray<string>) => Effect.Effect<void>
      readonly list: Effect.Effect<ReadonlyArray<{ readonly path: string; readonly heldAt: string }>>
    }
    /** The last completed reconcile's failures (table pass_failures). */
    readonly passFailures: {
      readonly replace: (failures: ReadonlyArray<PassFailure>) => Effect.Effect<void>
      readonly list: Effect.Effect<ReadonlyArray<PassFailure>>
    }
    readonly events: {
      readonly append: (event: StoreEvent) => Effect.Effect<void>
      /** The newest `limit` events, oldest first. */
      readonly recent: (limit: number) => Effect.Effect<ReadonlyArray<RecordedEvent>>
    }
    readonly liveTransfers: LiveTransfersStore
    /** App-state entries waiting in the outbox (appstate/), for `status`: written by the next run or the daemon. */
    readonly appStateQueued: Effect.Effect<number>
  }
>()("dlsync/store/Store") {
  static readonly layer: Layer.Layer<Store, never, Database> = Layer.effect(
    Store,
    Effect.gen(function* () {
      const { db } = yield* Database
      return Store.of(makeStore(db))
    })
  )
}

// ---------------------------------------------------------------------------------------

const Bool = Schema.Literals([0, 1])

const RemoteRow = Schema.Struct({
  id: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  parent_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  type: Schema.Literals(["file", "folder"]),
  kind: Schema.String,
  size_bytes: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  mime_type: Schema.String,
  locked: Bool,
  updated_at: Schema.String,
  created_at: Schema.String,
  expires_at: Schema.NullOr(Schema.String)
})

const FeedRow = Schema.Struct({
  mode: Schema.Literals(["changes", "listing"]),
  mode_reason: Schema.String,
  kind: Schema.NullOr(Schema.String),
  include_media: Bool,
  include_poster: Bool,
  cursor: Schema.NullOr(Schema.String),
  cursor_updated_at: Schema.NullOr(Schema.String),
  generation: Schema.Int,
  rebuild_generation: Schema.NullOr(Schema.Int),
  rebuild_reason: Schema.NullOr(Schema.String),
  watermark: Schema.NullOr(Schema.String),
  last_poll_at: Schema.NullOr(Schema.String)
})

const Decimal = Schema.String.pipe(Schema.check(Schema.isPattern(/^-?\d+$/)))

const LocalRow = Schema.Struct({
  path: Schema.String,
  remote_id: Schema.String,
  type: Schema.Literals(["file", "folder"]),
  size_bytes: Schema.NullOr(Schema.Int),
  mtime_ns: Schema.NullOr(Decimal),
  inode: Schema.NullOr(Decimal),
  remote_size: Schema.Int,
  remote_updated_at: Schema.String,
  remote_name: Schema.String,
  remote_parent_id: Schema.NullOr(Schema.String),
  state: Schema.Literals(["synced", "pending", "failed"]),
  attempts: Schema.Int,
  last_error: Schema.NullOr(Schema.String)
})

const MarkerRow = Schema.Struct({ remote_id: Schema.String, path: Schema.String })
const HeldRow = Schema.Struct({ path: Schema.String, held_at: Schema.String })
const EventRow = Schema.Struct({
  seq: Schema.Int,
  at: Schema.String,
  level: Schema.Literals(["info", "warn", "error"]),
  kind: Schema.String,
  path: Schema.NullOr(Schema.String),
  remote_id: Schema.NullOr(Schema.String),
  message: Schema.String
})
const CountRow = Schema.Struct({ n: Schema.Int })
const PendingRow = Schema.Struct({
  op: Schema.Literals(["rename", "conflict_copy", "trash", "delete"]),
  remote_id: Schema.String,
  from_path: Schema.String,
  to_path: Schema.NullOr(Schema.String),
  inode: Decimal
})

const decodeRemote = Schema.decodeUnknownSync(RemoteRow)
const decodeFeed = Schema.decodeUnknownSync(FeedRow)
const decodeLocal = Schema.decodeUnknownSync(LocalRow)
const decodeMarker = Schema.decodeUnknownSync(MarkerRow)
const decodeHeld = Schema.decodeUnknownSync(HeldRow)
const decodePassFailure = Schema.decodeUnknownSync(
  Schema.Struct({ path: Schema.String, remote_id: Schema.NullOr(Schema.String), reason: Schema.String })
)
const decodeEvent = Schema.decodeUnknownSync(EventRow)
const decodeCount = Schema.decodeUnknownSync(CountRow)
const decodePending = Schema.decodeUnknownSync(PendingRow)

const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

const makeStore = (db: BetterSqlite3.Database): Store["Service"] => {
  const countOutbox = db.prepare("SELECT COUNT(*) AS n FROM app_state_outbox")
  const q = {
    feed: db.prepare("SELECT * FROM feed_state WHERE id = 1"),
    setParams: db.prepare(
      "UPDATE feed_state SET mode = ?, mode_reason = ?, kind = ?, include_media = ?, include_poster = ? WHERE id = 1"
    ),
    setModeReason: db.prepare("UPDATE feed_state SET mode_reason = ? WHERE id = 1"),
    startRebuild: db.prepare(
      `UPDATE feed_state SET cursor = NULL, cursor_updated_at = ?,
         rebuild_generation = max(generation, coalesce(rebuild_generation, 0)) + 1, rebuild_reason = ?
       WHERE id = 1`
    ),
    completeRebuild: db.prepare(
      "UPDATE feed_state SET generation = rebuild_generation, rebuild_generation = NULL, rebuild_reason = NULL WHERE id = 1"
    ),
    setCursor: db.prepare("UPDATE feed_state SET cursor = ?, cursor_updated_at = ?, watermark = ? WHERE id = 1"),
    setPoll: db.prepare("UPDATE feed_state SET last_poll_at = ? WHERE id = 1"),
    // Positional parameters: binding by name looks each one up on a row object built per item.
    upsertItem: db.prepare(
      `INSERT INTO remote_items (id, parent_id, name, type, kind, size_bytes, mime_type, locked, updated_at, created_at, expires_at, generation)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, name = excluded.name, type = excluded.type,
         kind = excluded.kind, size_bytes = excluded.size_bytes, mime_type = excluded.mime_type, locked = excluded.locked,
         updated_at = excluded.updated_at, created_at = excluded.created_at, expires_at = excluded.expires_at,
         generation = excluded.generation`
    ),
    deleteItem: db.prepare("DELETE FROM remote_items WHERE id = ?"),
    deleteUnlisted: db.prepare("DELETE FROM remote_items WHERE generation < ?"),
    allItems: db.prepare("SELECT * FROM remote_items ORDER BY id"),
    getItem: db.prepare("SELECT * FROM remote_items WHERE id = ?"),
    countItems: db.prepare("SELECT count(*) AS n FROM remote_items"),
    allLocal: db.prepare("SELECT * FROM local_entries ORDER BY path"),
    countLocal: db.prepare("SELECT count(*) AS n FROM local_entries"),
    localByPath: db.prepare("SELECT * FROM local_entries WHERE path = ?"),
    localById: db.prepare("SELECT * FROM local_entries WHERE remote_id = ?"),
    deleteLocalById: db.prepare("DELETE FROM local_entries WHERE remote_id = ?"),
    putLocal: db.prepare(
      `INSERT OR REPLACE INTO local_entries (path, remote_id, type, size_bytes, mtime_ns, inode, remote_size,
         remote_updated_at, remote_name, remote_parent_id, state, attempts, last_error, updated_at)
       VALUES (@path, @remote_id, @type, @size_bytes, @mtime_ns, @inode, @remote_size, @remote_updated_at,
         @remote_name, @remote_parent_id, @state, @attempts, @last_error, @updated_at)`
    ),
    deleteLocal: db.prepare("DELETE FROM local_entries WHERE path = ?"),
    deleteLocalTree: db.prepare(
      "DELETE FROM local_entries WHERE path = @path OR substr(path, 1, length(@path) + 1) = @path || '/'"
    ),
    moveLocalTree: db.prepare(
      `UPDATE local_entries SET path = @to || substr(path, length(@from) + 1), updated_at = @now
       WHERE path = @from OR substr(path, 1, length(@from) + 1) = @from || '/'`
    ),
    putMarker: db.prepare("INSERT OR REPLACE INTO locally_deleted (remote_id, path, deleted_at) VALUES (?, ?, ?)"),
    allMarkers: db.prepare("SELECT remote_id, path FROM locally_deleted ORDER BY path"),
    deleteMarkerTree: db.prepare(
      "DELETE FROM locally_deleted WHERE path = @path OR substr(path, 1, length(@path) + 1) = @path || '/'"
    ),
    deleteMarker: db.prepare("DELETE FROM locally_deleted WHERE remote_id = ?"),
    deleteAllMarkers: db.prepare("DELETE FROM locally_deleted"),
    getPending: db.prepare("SELECT * FROM pending_op WHERE id = 1"),
    putPending: db.prepare(
      `INSERT OR REPLACE INTO pending_op (id, op, remote_id, from_path, to_path, inode, started_at)
       VALUES (1, @op, @remote_id, @from_path, @to_path, @inode, @started_at)`
    ),
    clearPending: db.prepare("DELETE FROM pending_op"),
    clearHeld: db.prepare("DELETE FROM held_deletes"),
    clearPassFailures: db.prepare("DELETE FROM pass_failures"),
    putPassFailure: db.prepare(
      "INSERT OR REPLACE INTO pass_failures (path, remote_id, reason) VALUES (@path, @remoteId, @reason)"
    ),
    allPassFailures: db.prepare("SELECT path, remote_id, reason FROM pass_failures ORDER BY path"),
    putHeld: db.prepare("INSERT OR REPLACE INTO held_deletes (path, held_at) VALUES (?, ?)"),
    allHeld: db.prepare("SELECT path, held_at FROM held_deletes ORDER BY path"),
    putEvent: db.prepare(
      "INSERT INTO events (at, level, kind, path, remote_id, message) VALUES (@at, @level, @kind, @path, @remote_id, @message)"
    ),
    pruneEvents: db.prepare("DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?"),
    recentEvents: db.prepare("SELECT * FROM (SELECT * FROM events ORDER BY seq DESC LIMIT ?) ORDER BY seq")
  }

  const readFeed = (): FeedState => {
    const row = decodeFeed(q.feed.get())
    return {
      params: {
        mode: row.mode,
        kind: row.kind,
        includeMedia: row.include_media === 1,
        includePoster: row.include_poster === 1
      },
      modeReason: row.mode_reason,
      cursor: row.cursor,
      cursorUpdatedAt: row.cursor_updated_at,
      generation: row.generation,
      rebuild:
        row.rebuild_generation === null || row.rebuild_reason === null
          ? null
          : { generation: row.rebuild_generation, reason: row.rebuild_reason },
      watermark: row.watermark,
      lastPollAt: row.last_poll_at,
      listingComplete: row.generation > 0 && row.rebuild_generation === null
    }
  }

  const appendEvent = (event: StoreEvent, at: string) => {
    q.putEvent.run({
      at,
      level: event.level,
      kind: event.kind,
      path: event.path,
      remote_id: event.remoteId,
      message: event.message
    })
    q.pruneEvents.run(EVENTS_KEPT)
  }

  const begin = (params: FeedParams, modeReason: string) =>
    Effect.flatMap(nowIso, (now) =>
      Effect.sync(
        db.transaction((): FeedState => {
          const current = readFeed()
          const changed = describeParamChange(current.params, params)
          if (changed !== null) {
            q.setParams.run(
              params.mode,
              modeReason,
              params.kind,
              Number(params.includeMedia),
              Number(params.includePoster)
            )
            // Nothing listed yet: the first listing simply starts with these parameters.
            const untouched =
              current.generation === 0 && current.cursor === null && decodeCount(q.countItems.get()).n === 0
            if (!untouched) {
              q.startRebuild.run(now, `query parameters changed (${changed})`)
              appendEvent(
                {
                  level: "warn",
                  kind: "feed_restart",
                  message: `feed restarted: ${changed}`,
                  path: null,
                  remoteId: null
                },
                now
              )
            }
          } else if (current.modeReason !== modeReason) q.setModeReason.run(modeReason)
          return readFeed()
        })
      )
    )

  const rebuild = (reason: string) =>
    Effect.flatMap(nowIso, (now) =>
      Effect.sync(
        db.transaction((): FeedState => {
          q.startRebuild.run(now, reason)
          appendEvent(
            { level: "warn", kind: "rebuild", message: `full listing started: ${reason}`, path: null, remoteId: null },
            now
          )
          return readFeed()
        })
      )
    )

  const applyPageNow = db.transaction((page: FeedPage, now: string): PageOutcome => {
    const feed = readFeed()
    const generation = feed.rebuild?.generation ?? feed.generation
    let upserted = 0
    let deleted = 0
    const watermark = new Watermark(feed.watermark)
    for (const change of page.changes) {
      if (change._tag === "Upsert") {
        const item = change.item
        q.upsertItem.run(
          item.id,
          item.parentId,
          item.name,
          item.type,
          item.kind,
          item.size,
          item.mimeType,
          item.locked ? 1 : 0,
          item.updatedAt,
          item.createdAt,
          item.expiresAt,
          generation
        )
        upserted++
        watermark.see(item.updatedAt)
      } else {
        deleted += q.deleteItem.run(change.id).changes
      }
    }
    q.setCursor.run(page.nextCursor, now, watermark.value)
    if (feed.rebuild === null || page.hasMore) {
      return { upserted, deleted, completedGeneration: null, removedUnlisted: 0 }
    }
    const removedUnlisted = q.deleteUnlisted.run(feed.rebuild.generation).changes
    q.completeRebuild.run()
    appendEvent(
      {
        level: "info",
        kind: "listing_complete",
        message: `full listing ${feed.rebuild.generation} complete (${feed.rebuild.reason}); ${removedUnlisted} items no longer listed`,
        path: null,
        remoteId: null
      },
      now
    )
    return { upserted, deleted, completedGeneration: feed.rebuild.generation, removedUnlisted }
  })

  const applyPage = (page: FeedPage) => Effect.flatMap(nowIso, (now) => Effect.sync(() => applyPageNow(page, now)))

  // One decode per row: the row schema checks every column the item is built from.
  const toItem = (raw: unknown): RemoteItem => {
    const row = decodeRemote(raw)
    return {
      id: row.id,
      parentId: row.parent_id,
      name: row.name,
      type: row.type,
      kind: row.kind,
      size: row.size_bytes,
      mimeType: row.mime_type,
      locked: row.locked === 1,
      updatedAt: row.updated_at,
      createdAt: row.created_at,
      expiresAt: row.expires_at
    }
  }

  const putEntry = db.transaction((entry: LocalEntry, now: string) => {
    const existing = q.localById.get(entry.remoteId)
    if (existing !== undefined && decodeLocal(existing).path !== entry.path) q.deleteLocalById.run(entry.remoteId)
    q.putLocal.run(entryRow(entry, now))
  })

  const moveEntries = db.transaction((from: string, to: string, now: string) => {
    // Nothing recorded at `from` (a move already applied): nothing to do, nothing to drop.
    if (from === to || q.localByPath.get(from) === undefined) return
    q.deleteLocalTree.run({ path: to })
    q.moveLocalTree.run({ from, to, now })
  })

  const markDeleted = db.transaction((marker: LocallyDeleted, now: string) => {
    q.deleteLocalById.run(marker.remoteId)
    q.putMarker.run(marker.remoteId, marker.path, now)
  })

  const replacePassFailures = db.transaction((failures: ReadonlyArray<PassFailure>) => {
    q.clearPassFailures.run()
    for (const f of failures) q.putPassFailure.run(f)
  })

  const replaceHeld = db.transaction((paths: ReadonlyArray<string>, now: string) => {
    q.clearHeld.run()
    for (const path of paths) q.putHeld.run(path, now)
  })

  return {
    feed: {
      state: Effect.sync(readFeed),
      begin,
      rebuild,
      applyPage,
      recordPoll: Effect.flatMap(nowIso, (now) => Effect.sync(() => void q.setPoll.run(now)))
    },
    remote: {
      all: Effect.sync(() => q.allItems.all().map(toItem)),
      get: (id) => Effect.sync(() => Option.map(Option.fromNullishOr(q.getItem.get(id)), toItem)),
      count: Effect.sync(() => decodeCount(q.countItems.get()).n)
    },
    local: {
      all: Effect.sync(() => q.allLocal.all().map(toEntry)),
      count: Effect.sync(() => decodeCount(q.countLocal.get()).n),
      byPath: (path) => Effect.sync(() => Option.map(Option.fromNullishOr(q.localByPath.get(path)), toEntry)),
      byRemoteId: (id) => Effect.sync(() => Option.map(Option.fromNullishOr(q.localById.get(id)), toEntry)),
      put: (entry) => Effect.flatMap(nowIso, (now) => Effect.sync(() => putEntry(entry, now))),
      remove: (path) => Effect.sync(() => void q.deleteLocal.run(path)),
      move: (from, to) => Effect.flatMap(nowIso, (now) => Effect.sync(() => moveEntries(from, to, now))),
      markDeleted: (marker) => Effect.flatMap(nowIso, (now) => Effect.sync(() => markDeleted(marker, now))),
      locallyDeleted: Effect.sync(() =>
        q.allMarkers.all().map((raw) => {
          const row = decodeMarker(raw)
          return { remoteId: row.remote_id, path: row.path }
        })
      ),
      restore: (path) => Effect.sync(() => q.deleteMarkerTree.run({ path }).changes),
      restoreAll: Effect.sync(() => q.deleteAllMarkers.run().changes),
      forgetMarker: (remoteId) => Effect.sync(() => void q.deleteMarker.run(remoteId))
    },
    pendingOp: {
      get: Effect.sync(() =>
        Option.map(Option.fromNullishOr(q.getPending.get()), (raw): PendingOp => {
          const row = decodePending(raw)
          return { op: row.op, remoteId: row.remote_id, from: row.from_path, to: row.to_path, ino: BigInt(row.inode) }
        })
      ),
      begin: (op) =>
        Effect.flatMap(nowIso, (now) =>
          Effect.sync(() => {
            q.putPending.run({
              op: op.op,
              remote_id: op.remoteId,
              from_path: op.from,
              to_path: op.to,
              inode: op.ino.toString(),
              started_at: now
            })
          })
        ),
      clear: Effect.sync(() => void q.clearPending.run())
    },
    passFailures: {
      replace: (failures) => Effect.sync(() => replacePassFailures(failures)),
      list: Effect.sync(() =>
        q.allPassFailures.all().map((raw) => {
          const row = decodePassFailure(raw)
          return { path: row.path, remoteId: row.remote_id, reason: row.reason }
        })
      )
    },
    held: {
      replace: (paths) => Effect.flatMap(nowIso, (now) => Effect.sync(() => replaceHeld(paths, now))),
      list: Effect.sync(() =>
        q.allHeld.all().map((raw) => {
          const row = decodeHeld(raw)
          return { path: row.path, heldAt: row.held_at }
        })
      )
    },
    events: {
      append: (event) => Effect.flatMap(nowIso, (now) => Effect.sync(() => appendEvent(event, now))),
      recent: (limit) =>
        Effect.sync(() =>
          q.recentEvents.all(limit).map((raw) => {
            const row = decodeEvent(raw)
            return {
              seq: row.seq,
              at: row.at,
              level: row.level,
              kind: row.kind,
              message: row.message,
              path: row.path,
              remoteId: row.remote_id
            }
          })
        )
    },
    liveTransfers: makeLiveTransfers(db),
    appStateQueued: Effect.sync(() => decodeCount(countOutbox.get()).n)
  }
}

const describeParamChange = (was: FeedParams, now: FeedParams): string | null => {
  const changes: Array<string> = []
  if (was.mode !== now.mode) changes.push(`mode ${was.mode} → ${now.mode}`)
  if (was.kind !== now.kind) changes.push(`kind ${was.kind ?? "all"} → ${now.kind ?? "all"}`)
  if (was.includeMedia !== now.includeMedia) changes.push(`include_media ${was.includeMedia} → ${now.includeMedia}`)
  if (was.includePoster !== now.includePoster) {
    changes.push(`include_poster ${was.includePoster} → ${now.includePoster}`)
  }
  return changes.length === 0 ? null : changes.join(", ")
}

/**
 * The highest updated_at seen: compared as instants, or as text when either does not parse.
 * The current highest is parsed once, not once per comparison.
 */
class Watermark {
  value: string | null
  private at: number
  constructor(value: string | null) {
    this.value = value
    this.at = value === null ? Number.NaN : Date.parse(value)
  }
  see(updatedAt: string): void {
    const at = Date.parse(updatedAt)
    const later =
      this.value === null || (Number.isNaN(at) || Number.isNaN(this.at) ? updatedAt > this.value : at > this.at)
    if (!later) return
    this.value = updatedAt
    this.at = at
  }
}

const entryRow = (entry: LocalEntry, now: string) => ({
  path: entry.path,
  remote_id: entry.remoteId,
  type: entry.type,
  size_bytes: entry.written?.size ?? null,
  mtime_ns: entry.written === null ? null : entry.written.mtimeNs.toString(),
  inode: entry.written === null ? null : entry.written.ino.toString(),
  remote_size: entry.remote.size,
  remote_updated_at: entry.remote.updatedAt,
  remote_name: entry.remote.name,
  remote_parent_id: entry.remote.parentId,
  state: entry.state,
  attempts: entry.attempts,
  last_error: entry.lastError,
  updated_at: now
})

const toEntry = (raw: unknown): LocalEntry => {
  const row = decodeLocal(raw)
  const state: LocalEntryState = row.state
  return {
    path: row.path,
    remoteId: row.remote_id,
    type: row.type,
    written:
      row.size_bytes === null || row.mtime_ns === null || row.inode === null
        ? null
        : { size: row.size_bytes, mtimeNs: BigInt(row.mtime_ns), ino: BigInt(row.inode) },
    remote: {
      size: row.remote_size,
      updatedAt: row.remote_updated_at,
      name: row.remote_name,
      parentId: row.remote_parent_id
    },
    state,
    attempts: row.attempts,
    lastError: row.last_error
  }
}
