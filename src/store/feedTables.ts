/**
 * The account as the feed last reported it: the feed's position (table `feed_state`) and the
 * remote items (table `remote_items`), see migrations.ts.
 *
 * Invariants:
 * - A feed page and the cursor that follows it commit in ONE transaction; re-applying a page
 *   is harmless (upserts and deletes by id; the last record for an id wins).
 * - Remote rows not seen by a full listing are removed only in the transaction that
 *   completes that listing; a crash mid-listing keeps them and resumes the listing.
 * - The cursor is valid only for the query parameters stored beside it; `begin` with other
 *   parameters discards it and starts a rebuild.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Option, Schema, SchemaTransformation } from "effect"
import type { FileId } from "../domain/FileId.ts"
import { type RemoteChange, RemoteItem } from "../domain/RemoteItem.ts"
import { decodeCount, nowIso, rowTo } from "./columns.ts"
import type { EventTables } from "./eventTables.ts"
import { writeTransaction } from "./writeTransaction.ts"

export const FeedParams = Schema.Struct({
  /** `changes`: GET /files/changes; `listing`: full GET /files walks (API keys, see the issue). */
  mode: Schema.Literals(["changes", "listing"]),
  kind: Schema.NullOr(Schema.String),
  includeMedia: Schema.Boolean,
  includePoster: Schema.Boolean
})
export type FeedParams = typeof FeedParams.Type

export const FeedState = Schema.Struct({
  params: FeedParams,
  /** Why this mode is in use, for `status`. */
  modeReason: Schema.String,
  cursor: Schema.NullOr(Schema.String),
  cursorUpdatedAt: Schema.NullOr(Schema.String),
  /** The last completed full listing; 0 when none has completed yet. */
  generation: Schema.Int,
  /** A full listing under way, resumed from `cursor` after a crash. */
  rebuild: Schema.NullOr(Schema.Struct({ generation: Schema.Int, reason: Schema.String })),
  /** The highest updated_at applied, for `updated_after` polls in listing mode. */
  watermark: Schema.NullOr(Schema.String),
  lastPollAt: Schema.NullOr(Schema.String),
  /** When the last catch-up that reached the feed's head started: the store holds every item the service held then. */
  caughtUpFrom: Schema.NullOr(Schema.String),
  /** A complete listing with the current parameters backs the store: deletions may be derived. */
  listingComplete: Schema.Boolean
})
export type FeedState = typeof FeedState.Type

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

export interface FeedTables {
  readonly feed: {
    readonly state: Effect.Effect<FeedState>
    /** Declares the parameters of this run; other parameters than the cursor's restart the feed. */
    readonly begin: (params: FeedParams, modeReason: string) => Effect.Effect<FeedState>
    /** Discards the cursor and starts a full listing into a new generation (410, 422, a walk). */
    readonly rebuild: (reason: string) => Effect.Effect<FeedState>
    /** Applies one page and commits its next cursor, in one transaction. */
    readonly applyPage: (page: FeedPage) => Effect.Effect<PageOutcome>
    /** Records a catch-up that reached the feed's head, and when it started (ISO 8601). */
    readonly recordPoll: (startedAt: string) => Effect.Effect<void>
  }
  readonly remote: {
    readonly all: Effect.Effect<ReadonlyArray<RemoteItem>>
    readonly get: (id: FileId) => Effect.Effect<Option.Option<RemoteItem>>
    readonly count: Effect.Effect<number>
    /** The files the feed reported with this `download_id`. */
    readonly filesOfDownload: (downloadId: string) => Effect.Effect<ReadonlyArray<RemoteItem>>
  }
}

/** The feed's tables; `log` records feed restarts and completed listings in their transactions. */
export const makeFeedTables = (db: BetterSqlite3.Database, log: EventTables): FeedTables => {
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
    setPoll: db.prepare("UPDATE feed_state SET last_poll_at = ?, caught_up_from = ? WHERE id = 1"),
    // Positional parameters: binding by name looks each one up on a row object built per item.
    upsertItem: db.prepare(
      `INSERT INTO remote_items (id, parent_id, name, type, kind, size_bytes, mime_type, locked, updated_at, created_at, expires_at, generation, download_id, poster_url)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, name = excluded.name, type = excluded.type,
         kind = excluded.kind, size_bytes = excluded.size_bytes, mime_type = excluded.mime_type, locked = excluded.locked,
         updated_at = excluded.updated_at, created_at = excluded.created_at, expires_at = excluded.expires_at,
         generation = excluded.generation, download_id = excluded.download_id, poster_url = excluded.poster_url`
    ),
    deleteItem: db.prepare("DELETE FROM remote_items WHERE id = ?"),
    deleteUnlisted: db.prepare("DELETE FROM remote_items WHERE generation < ?"),
    allItems: db.prepare("SELECT * FROM remote_items ORDER BY id"),
    getItem: db.prepare("SELECT * FROM remote_items WHERE id = ?"),
    countItems: db.prepare("SELECT count(*) AS n FROM remote_items"),
    filesOfDownload: db.prepare("SELECT * FROM remote_items WHERE download_id = ? AND type = 'file' ORDER BY id")
  }

  const readFeed = (): FeedState => decodeFeed(q.feed.get())

  const begin = (params: FeedParams, modeReason: string) =>
    Effect.flatMap(nowIso, (now) =>
      Effect.sync(
        writeTransaction(db, (): FeedState => {
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
              current.generation === 0 && current.cursor === null && decodeCount(q.countItems.get()) === 0
            if (!untouched) {
              q.startRebuild.run(now, `query parameters changed (${changed})`)
              log.appendAt(
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
        writeTransaction(db, (): FeedState => {
          q.startRebuild.run(now, reason)
          log.appendAt(
            { level: "warn", kind: "rebuild", message: `full listing started: ${reason}`, path: null, remoteId: null },
            now
          )
          return readFeed()
        })
      )
    )

  const applyPageNow = writeTransaction(db, (page: FeedPage, now: string): PageOutcome => {
    const feed = readFeed()
    const generation = feed.rebuild?.generation ?? feed.generation
    let upserted = 0
    let deleted = 0
    const watermark = new Watermark(feed.watermark)
    for (const change of page.changes) {
      if (change._tag === "Upsert") {
        // Bound column by column, not through RemoteItemRow's encoder: this is the per-item path.
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
          generation,
          item.downloadId ?? null,
          item.posterUrl ?? null
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
    log.appendAt(
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

  return {
    feed: {
      state: Effect.sync(readFeed),
      begin,
      rebuild,
      applyPage: (page) => Effect.flatMap(nowIso, (now) => Effect.sync(() => applyPageNow(page, now))),
      recordPoll: (startedAt) => Effect.flatMap(nowIso, (now) => Effect.sync(() => void q.setPoll.run(now, startedAt)))
    },
    remote: {
      all: Effect.sync(() => q.allItems.all().map((raw) => decodeItem(raw))),
      get: (id) => Effect.sync(() => Option.map(Option.fromNullishOr(q.getItem.get(id)), decodeItem)),
      count: Effect.sync(() => decodeCount(q.countItems.get())),
      filesOfDownload: (downloadId) =>
        Effect.sync(() => q.filesOfDownload.all(downloadId).map((raw) => decodeItem(raw)))
    }
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

// ---------------------------------------------------------------------------------------

/** A `remote_items` row: the item's fields under their column names, `locked` as 0/1. */
const RemoteItemRow = rowTo<RemoteItem>()(
  Schema.Struct({
    id: RemoteItem.fields.id,
    parent_id: RemoteItem.fields.parentId,
    name: RemoteItem.fields.name,
    type: RemoteItem.fields.type,
    kind: RemoteItem.fields.kind,
    size_bytes: RemoteItem.fields.size,
    mime_type: RemoteItem.fields.mimeType,
    locked: Schema.BooleanFromBit,
    updated_at: RemoteItem.fields.updatedAt,
    created_at: RemoteItem.fields.createdAt,
    expires_at: RemoteItem.fields.expiresAt,
    download_id: Schema.NullOr(Schema.String),
    poster_url: Schema.NullOr(Schema.String)
  }),
  {
    decode: (row) => ({
      id: row.id,
      parentId: row.parent_id,
      name: row.name,
      type: row.type,
      kind: row.kind,
      size: row.size_bytes,
      mimeType: row.mime_type,
      locked: row.locked,
      updatedAt: row.updated_at,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      ...(row.download_id === null ? {} : { downloadId: row.download_id }),
      ...(row.poster_url === null ? {} : { posterUrl: row.poster_url })
    }),
    encode: (item) => ({
      id: item.id,
      parent_id: item.parentId,
      name: item.name,
      type: item.type,
      kind: item.kind,
      size_bytes: item.size,
      mime_type: item.mimeType,
      locked: item.locked,
      updated_at: item.updatedAt,
      created_at: item.createdAt,
      expires_at: item.expiresAt,
      download_id: item.downloadId ?? null,
      poster_url: item.posterUrl ?? null
    })
  }
)

/** The single `feed_state` row; `listingComplete` is derived, not stored. */
const FeedStateRow = Schema.Struct({
  mode: FeedParams.fields.mode,
  mode_reason: Schema.String,
  kind: Schema.NullOr(Schema.String),
  include_media: Schema.BooleanFromBit,
  include_poster: Schema.BooleanFromBit,
  cursor: Schema.NullOr(Schema.String),
  cursor_updated_at: Schema.NullOr(Schema.String),
  generation: Schema.Int,
  rebuild_generation: Schema.NullOr(Schema.Int),
  rebuild_reason: Schema.NullOr(Schema.String),
  watermark: Schema.NullOr(Schema.String),
  last_poll_at: Schema.NullOr(Schema.String),
  caught_up_from: Schema.NullOr(Schema.String)
}).pipe(
  Schema.decodeTo(
    FeedState,
    SchemaTransformation.transform({
      decode: (row): FeedState => ({
        params: {
          mode: row.mode,
          kind: row.kind,
          includeMedia: row.include_media,
          includePoster: row.include_poster
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
        caughtUpFrom: row.caught_up_from,
        listingComplete: row.generation > 0 && row.rebuild_generation === null
      }),
      encode: (state) => ({
        mode: state.params.mode,
        mode_reason: state.modeReason,
        kind: state.params.kind,
        include_media: state.params.includeMedia,
        include_poster: state.params.includePoster,
        cursor: state.cursor,
        cursor_updated_at: state.cursorUpdatedAt,
        generation: state.generation,
        rebuild_generation: state.rebuild?.generation ?? null,
        rebuild_reason: state.rebuild?.reason ?? null,
        watermark: state.watermark,
        last_poll_at: state.lastPollAt,
        caught_up_from: state.caughtUpFrom
      })
    })
  )
)

const decodeItem = Schema.decodeUnknownSync(RemoteItemRow)
const decodeFeed = Schema.decodeUnknownSync(FeedStateRow)
