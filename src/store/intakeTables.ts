/**
 * The intake queue's records (tables `intakes` and `intake_categories`, see migrations.ts):
 * each release a surface handed in, kept from before anything is sent until a removal
 * leaves its tombstone. The intake (src/intake/) is the only writer; several processes may
 * share the table (`dlsync add` beside a running daemon), so every change is one statement
 * or one transaction, and a phase change names the phases it may leave (compare-and-set).
 *
 * Invariants:
 * - One row per identity, created with its source bytes, so a restart can send it.
 * - `sending` is written before a creation request goes out and left only with its answer
 *   stored (`sent`, `selecting`) or after a lookup by client_reference found none (`new`):
 *   a crash in between leaves `sending`, which is looked up before any new POST.
 * - `removed` is a tombstone: the row stays, `add` revives it.
 * - A release's files are not kept here: they are the remote items whose `download_id` is
 *   its download (store/releaseFiles.ts); `content_path` is fixed with `completed_at`.
 * - `via` is the surface that added it; categories created through a surface belong to it.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { IntakeId } from "../domain/IntakeId.ts"
import { Database } from "./Database.ts"
import { writeTransaction } from "./writeTransaction.ts"

export const IntakePhase = Schema.Literals(["new", "sending", "selecting", "parked", "sent", "failed", "removed"])
export type IntakePhase = typeof IntakePhase.Type

export const SourceKind = Schema.Literals(["magnet", "torrent", "nzb", "url"])
export type SourceKind = typeof SourceKind.Type

/** One item of a selection stage as the service offered it. */
export const OfferedItem = Schema.Struct({
  itemId: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  name: Schema.String,
  /** Bytes, when the service gave a size. */
  size: Schema.NullOr(Schema.Number),
  selectable: Schema.Boolean
})
export type OfferedItem = typeof OfferedItem.Type

export const IntakeRecord = Schema.Struct({
  id: IntakeId,
  name: Schema.String,
  category: Schema.String,
  /** The folder the download was (or will be) created in, below the account root. */
  directory: Schema.String,
  /**
   * The category whose folder holds `directory`: the release's category when it was sent (a
   * later category change lists it elsewhere, its files stay where they are).
   */
  directoryCategory: Schema.String,
  via: Schema.String,
  sourceKind: SourceKind,
  fileName: Schema.NullOr(Schema.String),
  /** The magnet or URL as UTF-8, or the file's bytes. */
  source: Schema.Uint8Array,
  /** The 40-hex info-hash for torrents and magnets. */
  infoHash: Schema.NullOr(Schema.String),
  phase: IntakePhase,
  paused: Schema.Boolean,
  reason: Schema.NullOr(Schema.String),
  /** Ms since the epoch before which nothing is sent (a cap's reset, a rate limit), or when it is expected to go. */
  notBefore: Schema.NullOr(Schema.Number),
  /** Why a new intake waits: an account cap (looked at again every minute) or the service's rate limit (until notBefore). */
  heldBy: Schema.NullOr(Schema.Literals(["cap", "rate_limit"])),
  selectionId: Schema.NullOr(Schema.String),
  selectionExpiresAt: Schema.NullOr(Schema.String),
  /** A stage no policy answered, kept for the user to choose from; null otherwise. */
  selectionItems: Schema.NullOr(Schema.Array(OfferedItem)),
  /** The item the user chose from selectionItems, sent by the runner. */
  selectionChoice: Schema.NullOr(Schema.String),
  downloadId: Schema.NullOr(Schema.String),
  /** The service's last reported status, its progress (0..1, never lowered), size and rate (bytes/s). */
  status: Schema.NullOr(Schema.String),
  progress: Schema.Number,
  size: Schema.Number,
  serviceRate: Schema.Number,
  /** When dlsync saw the download completed on the service (ms since the epoch). */
  serviceCompletedAt: Schema.NullOr(Schema.Number),
  addedAt: Schema.Number,
  /** When every file was verified on local disk; `contentPath` is fixed then. */
  completedAt: Schema.NullOr(Schema.Number),
  /** The release's path below the mirror root, as reported once complete. */
  contentPath: Schema.NullOr(Schema.String),
  updatedAt: Schema.Number,
  /** What a removal still owes the service: its download record, or the record and the files. */
  cleanup: Schema.NullOr(Schema.Literals(["record", "files"]))
})
export type IntakeRecord = typeof IntakeRecord.Type

export type NewIntake = Pick<
  IntakeRecord,
  | "id"
  | "name"
  | "category"
  | "directory"
  | "directoryCategory"
  | "via"
  | "sourceKind"
  | "fileName"
  | "source"
  | "infoHash"
  | "paused"
>

/** Fields a phase change may set. */
export type IntakePatch = Partial<Omit<IntakeRecord, "id" | "addedAt" | "updatedAt" | "source" | "sourceKind">>

export class IntakeTables extends Context.Service<
  IntakeTables,
  {
    /**
     * Records a release, or finds it: an identity already present is returned as it is
     * (`created: false`); a tombstone is revived as a new intake.
     */
    readonly add: (
      intake: NewIntake,
      now: number
    ) => Effect.Effect<{ readonly record: IntakeRecord; readonly created: boolean }>
    readonly get: (id: IntakeId) => Effect.Effect<Option.Option<IntakeRecord>>
    /** Every record but tombstones, oldest first; `source` is left empty (read it with `get`). */
    readonly live: Effect.Effect<ReadonlyArray<IntakeRecord>>
    /**
     * What the runner has to do, in one query: live records not yet complete, and tombstones
     * whose removal still owes the service something; `source` is left empty.
     */
    readonly unfinished: Effect.Effect<ReadonlyArray<IntakeRecord>>
    /** The live record of a service download, if any. */
    readonly byDownload: (downloadId: string) => Effect.Effect<Option.Option<IntakeRecord>>
    /** Applies `patch` if the record is in one of `from`; false (nothing written) otherwise. */
    readonly update: (
      id: IntakeId,
      from: ReadonlyArray<IntakePhase>,
      patch: IntakePatch,
      now: number
    ) => Effect.Effect<boolean>
    /** Remote ids the mirror takes whatever its filters: the files of live intakes' downloads. */
    readonly mirroredIds: Effect.Effect<ReadonlySet<string>>
    /** The categories created through `surface`. */
    readonly categories: (surface: string) => Effect.Effect<ReadonlyArray<string>>
    readonly createCategory: (surface: string, name: string) => Effect.Effect<void>
    readonly removeCategory: (surface: string, name: string) => Effect.Effect<void>
  }
>()("dlsync/store/IntakeTables") {
  static readonly layer: Layer.Layer<IntakeTables, never, Database> = Layer.effect(
    IntakeTables,
    Effect.gen(function* () {
      const { db } = yield* Database
      return IntakeTables.of(makeIntakeTables(db))
    })
  )
}

export const makeIntakeTables = (db: BetterSqlite3.Database): IntakeTables["Service"] => {
  const q = {
    get: db.prepare("SELECT * FROM intakes WHERE id = ?"),
    // Listings leave the source out (a torrent file can be megabytes; surfaces list often): `get` has it.
    live: db.prepare(`SELECT ${WITHOUT_SOURCE} FROM intakes WHERE phase <> 'removed' ORDER BY added_at, id`),
    unfinished: db.prepare(
      `SELECT ${WITHOUT_SOURCE} FROM intakes
       WHERE (phase <> 'removed' AND completed_at IS NULL) OR (phase = 'removed' AND cleanup IS NOT NULL)
       ORDER BY added_at, id`
    ),
    byDownload: db.prepare(
      `SELECT ${WITHOUT_SOURCE} FROM intakes WHERE download_id = ? AND phase <> 'removed' ORDER BY added_at LIMIT 1`
    ),
    insert: db.prepare(
      `INSERT OR REPLACE INTO intakes (id, name, category, directory, directory_category, via, source_kind, file_name,
         source, info_hash, phase, paused, progress, size, added_at, updated_at)
       VALUES (@id, @name, @category, @directory, @directory_category, @via, @source_kind, @file_name,
         @source, @info_hash, 'new', @paused, 0, 0, @now, @now)`
    ),
    mirrored: db.prepare(
      `SELECT r.id FROM remote_items r JOIN intakes i ON r.download_id = i.download_id
       WHERE i.phase <> 'removed' AND r.type = 'file'`
    ),
    categories: db.prepare("SELECT name FROM intake_categories WHERE surface = ? ORDER BY name"),
    createCategory: db.prepare("INSERT OR IGNORE INTO intake_categories (surface, name) VALUES (?, ?)"),
    removeCategory: db.prepare("DELETE FROM intake_categories WHERE surface = ? AND name = ?")
  }
  const getRow = (id: string): IntakeRecord | undefined => {
    const raw = q.get.get(id)
    return raw === undefined ? undefined : decodeRow(raw)
  }
  const add = writeTransaction(db, (intake: NewIntake, now: number) => {
    const existing = getRow(intake.id)
    if (existing !== undefined && existing.phase !== "removed") return { record: existing, created: false }
    q.insert.run({
      id: intake.id,
      name: intake.name,
      category: intake.category,
      directory: intake.directory,
      directory_category: intake.directoryCategory,
      via: intake.via,
      source_kind: intake.sourceKind,
      file_name: intake.fileName,
      source: Buffer.from(intake.source),
      info_hash: intake.infoHash,
      paused: intake.paused ? 1 : 0,
      now
    })
    const record = getRow(intake.id)
    if (record === undefined) throw new Error(`intake ${intake.id} vanished after its insert`)
    return { record, created: true }
  })
  const update = writeTransaction(
    db,
    (id: string, from: ReadonlyArray<IntakePhase>, patch: IntakePatch, now: number): boolean => {
      const current = getRow(id)
      if (current === undefined || !from.includes(current.phase)) return false
      const sets: Array<string> = ["updated_at = @updated_at"]
      const values: Record<string, unknown> = { id, updated_at: now }
      for (const [key, value] of Object.entries(patch)) {
        const column = COLUMNS[key as keyof IntakePatch]
        if (column === undefined || value === undefined) continue
        sets.push(`${column} = @${column}`)
        values[column] = toColumn(key, value)
      }
      db.prepare(`UPDATE intakes SET ${sets.join(", ")} WHERE id = @id`).run(values)
      return true
    }
  )
  return {
    add: (intake, now) => Effect.sync(() => add(intake, now)),
    get: (id) => Effect.sync(() => Option.fromNullishOr(getRow(id))),
    live: Effect.sync(() => q.live.all().map(decodeRow)),
    unfinished: Effect.sync(() => q.unfinished.all().map(decodeRow)),
    byDownload: (downloadId) =>
      Effect.sync(() => Option.map(Option.fromNullishOr(q.byDownload.get(downloadId)), decodeRow)),
    update: (id, from, patch, now) => Effect.sync(() => update(id, from, patch, now)),
    mirroredIds: Effect.sync(() => new Set(q.mirrored.all().map((raw) => decodeId(raw).id))),
    categories: (surface) => Effect.sync(() => q.categories.all(surface).map((raw) => decodeName(raw).name)),
    createCategory: (surface, name) => Effect.sync(() => void q.createCategory.run(surface, name)),
    removeCategory: (surface, name) => Effect.sync(() => void q.removeCategory.run(surface, name))
  }
}

// ---------------------------------------------------------------------------------------

const WITHOUT_SOURCE = `id, name, category, directory, directory_category, via, source_kind, file_name, X'' AS source, info_hash, phase,
  paused, reason, not_before, held_by, selection_id, selection_expires_at, selection_items, selection_choice, download_id, status, progress, size, service_rate,
  service_completed_at, added_at, completed_at, content_path, updated_at, cleanup`

const COLUMNS: { readonly [K in keyof Required<IntakePatch>]: string } = {
  name: "name",
  category: "category",
  directory: "directory",
  directoryCategory: "directory_category",
  via: "via",
  fileName: "file_name",
  infoHash: "info_hash",
  phase: "phase",
  paused: "paused",
  reason: "reason",
  notBefore: "not_before",
  heldBy: "held_by",
  selectionId: "selection_id",
  selectionExpiresAt: "selection_expires_at",
  selectionItems: "selection_items",
  selectionChoice: "selection_choice",
  downloadId: "download_id",
  status: "status",
  progress: "progress",
  size: "size",
  serviceRate: "service_rate",
  serviceCompletedAt: "service_completed_at",
  completedAt: "completed_at",
  contentPath: "content_path",
  cleanup: "cleanup"
}

const toColumn = (key: string, value: unknown): unknown => {
  if (value === null) return null
  if (key === "paused") return value === true ? 1 : 0
  if (key === "selectionItems") return JSON.stringify(value)
  return value
}

const Row = Schema.Struct({
  id: IntakeId,
  name: Schema.String,
  category: Schema.String,
  directory: Schema.String,
  directory_category: Schema.String,
  via: Schema.String,
  source_kind: SourceKind,
  file_name: Schema.NullOr(Schema.String),
  source: Schema.Uint8Array,
  info_hash: Schema.NullOr(Schema.String),
  phase: IntakePhase,
  paused: Schema.Literals([0, 1]),
  reason: Schema.NullOr(Schema.String),
  not_before: Schema.NullOr(Schema.Number),
  held_by: Schema.NullOr(Schema.Literals(["cap", "rate_limit"])),
  selection_id: Schema.NullOr(Schema.String),
  selection_expires_at: Schema.NullOr(Schema.String),
  selection_items: Schema.NullOr(Schema.fromJsonString(Schema.Array(OfferedItem))),
  selection_choice: Schema.NullOr(Schema.String),
  download_id: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.String),
  progress: Schema.Number,
  size: Schema.Number,
  service_rate: Schema.Number,
  service_completed_at: Schema.NullOr(Schema.Number),
  added_at: Schema.Number,
  completed_at: Schema.NullOr(Schema.Number),
  content_path: Schema.NullOr(Schema.String),
  updated_at: Schema.Number,
  cleanup: Schema.NullOr(Schema.Literals(["record", "files"]))
})
const decodeRowColumns = Schema.decodeUnknownSync(Row)

const decodeRow = (raw: unknown): IntakeRecord => {
  const r = decodeRowColumns(raw)
  return {
    id: r.id,
    name: r.name,
    category: r.category,
    directory: r.directory,
    directoryCategory: r.directory_category,
    via: r.via,
    sourceKind: r.source_kind,
    fileName: r.file_name,
    source: r.source,
    infoHash: r.info_hash,
    phase: r.phase,
    paused: r.paused === 1,
    reason: r.reason,
    notBefore: r.not_before,
    heldBy: r.held_by,
    selectionId: r.selection_id,
    selectionExpiresAt: r.selection_expires_at,
    selectionItems: r.selection_items,
    selectionChoice: r.selection_choice,
    downloadId: r.download_id,
    status: r.status,
    progress: r.progress,
    size: r.size,
    serviceRate: r.service_rate,
    serviceCompletedAt: r.service_completed_at,
    addedAt: r.added_at,
    completedAt: r.completed_at,
    contentPath: r.content_path,
    updatedAt: r.updated_at,
    cleanup: r.cleanup
  }
}

const decodeId = Schema.decodeUnknownSync(Schema.Struct({ id: Schema.String }))
const decodeName = Schema.decodeUnknownSync(Schema.Struct({ name: Schema.String }))
