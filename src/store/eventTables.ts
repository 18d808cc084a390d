/**
 * The event log (table `events`) and the held big delete (table `held_deletes`), see
 * migrations.ts. The log keeps the newest EVENTS_KEPT events; every append prunes the rest
 * in the same statement sequence, so the table never grows without bound.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { nowIso } from "./columns.ts"
import { writeTransaction } from "./writeTransaction.ts"

export const EventLevel = Schema.Literals(["info", "warn", "error"])
export type EventLevel = typeof EventLevel.Type

export const StoreEvent = Schema.Struct({
  level: EventLevel,
  kind: Schema.String,
  message: Schema.String,
  path: Schema.NullOr(Schema.String),
  remoteId: Schema.NullOr(Schema.String)
})
export type StoreEvent = typeof StoreEvent.Type

export const RecordedEvent = StoreEvent.pipe(Schema.fieldsAssign({ seq: Schema.Int, at: Schema.String }))
export type RecordedEvent = typeof RecordedEvent.Type

/** A path of the held big delete and since when it is held. */
export const HeldDelete = Schema.Struct({ path: Schema.String, heldAt: Schema.String })
export type HeldDelete = typeof HeldDelete.Type

/** How many events the log keeps. */
export const EVENTS_KEPT = 10_000

export interface EventTables {
  readonly events: {
    readonly append: (event: StoreEvent) => Effect.Effect<void>
    /** The newest `limit` events, oldest first. */
    readonly recent: (limit: number) => Effect.Effect<ReadonlyArray<RecordedEvent>>
  }
  readonly held: {
    /** Replaces the held big delete (an empty list clears it). */
    readonly replace: (paths: ReadonlyArray<string>) => Effect.Effect<void>
    readonly list: Effect.Effect<ReadonlyArray<HeldDelete>>
  }
  /** Appends inside a transaction of another table group (a feed restart, a completed listing). */
  readonly appendAt: (event: StoreEvent, at: string) => void
}

export const makeEventTables = (db: BetterSqlite3.Database): EventTables => {
  const q = {
    // A path held already keeps its time: "held since" is when it was first held.
    putHeld: db.prepare("INSERT OR IGNORE INTO held_deletes (path, held_at) VALUES (?, ?)"),
    dropUnheld: db.prepare("DELETE FROM held_deletes WHERE path NOT IN (SELECT value FROM json_each(?))"),
    allHeld: db.prepare("SELECT path, held_at FROM held_deletes ORDER BY path"),
    putEvent: db.prepare(
      "INSERT INTO events (at, level, kind, path, remote_id, message) VALUES (@at, @level, @kind, @path, @remote_id, @message)"
    ),
    pruneEvents: db.prepare("DELETE FROM events WHERE seq <= (SELECT max(seq) FROM events) - ?"),
    recentEvents: db.prepare("SELECT * FROM (SELECT * FROM events ORDER BY seq DESC LIMIT ?) ORDER BY seq")
  }

  const appendAt = (event: StoreEvent, at: string) => {
    q.putEvent.run({ ...encodeEvent(event), at })
    q.pruneEvents.run(EVENTS_KEPT)
  }

  const replaceHeld = writeTransaction(db, (paths: ReadonlyArray<string>, now: string) => {
    q.dropUnheld.run(JSON.stringify(paths))
    for (const path of paths) q.putHeld.run(path, now)
  })

  return {
    events: {
      append: (event) => Effect.flatMap(nowIso, (now) => Effect.sync(() => appendAt(event, now))),
      recent: (limit) => Effect.sync(() => q.recentEvents.all(limit).map((raw) => decodeRecorded(raw)))
    },
    held: {
      replace: (paths) => Effect.flatMap(nowIso, (now) => Effect.sync(() => replaceHeld(paths, now))),
      list: Effect.sync(() => q.allHeld.all().map((raw) => decodeHeld(raw)))
    },
    appendAt
  }
}

// ---------------------------------------------------------------------------------------

const EventRow = StoreEvent.pipe(Schema.encodeKeys({ remoteId: "remote_id" }))
const RecordedEventRow = RecordedEvent.pipe(Schema.encodeKeys({ remoteId: "remote_id" }))
const HeldDeleteRow = HeldDelete.pipe(Schema.encodeKeys({ heldAt: "held_at" }))

const encodeEvent = Schema.encodeSync(EventRow)
const decodeRecorded = Schema.decodeUnknownSync(RecordedEventRow)
const decodeHeld = Schema.decodeUnknownSync(HeldDeleteRow)
