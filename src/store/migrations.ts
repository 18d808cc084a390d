/**
 * The state database's schema, as numbered migrations. Migration N brings a database from
 * `PRAGMA user_version` N-1 to N, in one transaction with the version bump. A database whose
 * version is above the last migration here was written by a newer dlsync and is refused,
 * never rewritten (see database.ts).
 *
 * Every table is STRICT and opens with a comment stating its invariants.
 */
import { V13_RELEASES_OWN_FILES } from "./v13ReleasesOwnFiles.ts"

export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

const V1_INITIAL = `
-- remote_items: the account's files and folders as the feed last reported them.
-- Invariants: one row per remote id, for an item the service reported alive; a delete record
-- removes the row. \`generation\` is the listing generation that last saw the item: while a
-- rebuild into generation G runs, rows below G are unconfirmed and are removed only in the
-- transaction that completes that listing.
CREATE TABLE remote_items (
  id          TEXT PRIMARY KEY NOT NULL CHECK (id <> ''),
  parent_id   TEXT,
  name        TEXT NOT NULL,
  type        TEXT NOT NULL CHECK (type IN ('file', 'folder')),
  kind        TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL CHECK (size_bytes >= 0),
  mime_type   TEXT NOT NULL,
  locked      INTEGER NOT NULL CHECK (locked IN (0, 1)),
  updated_at  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT,
  generation  INTEGER NOT NULL CHECK (generation >= 0)
) STRICT;
CREATE INDEX remote_items_parent ON remote_items (parent_id);
CREATE INDEX remote_items_generation ON remote_items (generation);

-- feed_state: exactly one row (id = 1), how far the store has followed the service.
-- Invariants: \`cursor\` is meaningful only for the query parameters stored beside it (mode,
-- kind, include_media, include_poster; the change feed's rule 8 in docs/download-service-api.md): changing any of them discards it and
-- starts a rebuild. \`cursor\` is written only in the transaction that applies the page it
-- follows. \`generation\` is the last completed full listing (0: none yet); while
-- \`rebuild_generation\` is set, a full listing into it is under way and \`cursor\` continues
-- it after a crash. rebuild_generation > generation whenever it is set.
CREATE TABLE feed_state (
  id                  INTEGER PRIMARY KEY CHECK (id = 1),
  mode                TEXT NOT NULL CHECK (mode IN ('changes', 'listing')),
  mode_reason         TEXT NOT NULL,
  kind                TEXT,
  include_media       INTEGER NOT NULL CHECK (include_media IN (0, 1)),
  include_poster      INTEGER NOT NULL CHECK (include_poster IN (0, 1)),
  cursor              TEXT,
  cursor_updated_at   TEXT,
  generation          INTEGER NOT NULL CHECK (generation >= 0),
  rebuild_generation  INTEGER,
  rebuild_reason      TEXT,
  watermark           TEXT,
  last_poll_at        TEXT,
  CHECK (rebuild_generation IS NULL OR rebuild_generation > generation),
  CHECK ((rebuild_generation IS NULL) = (rebuild_reason IS NULL))
) STRICT;
INSERT INTO feed_state (id, mode, mode_reason, kind, include_media, include_poster, generation, rebuild_generation, rebuild_reason)
VALUES (1, 'changes', 'default', NULL, 0, 0, 0, 1, 'first listing');

-- local_entries: the paths dlsync wrote under the mirror root.
-- Invariants: \`path\` is relative, '/'-separated and inside the root; at most one entry per
-- remote id; size_bytes, mtime_ns and inode are what lstat showed right after dlsync wrote the
-- path, all three null when nothing has been written yet. Only a path whose entry still
-- matches a fresh lstat may be replaced or removed. remote_* record the remote version the
-- written content is a copy of.
CREATE TABLE local_entries (
  path              TEXT PRIMARY KEY NOT NULL CHECK (path <> '' AND path NOT LIKE '/%'),
  remote_id         TEXT NOT NULL UNIQUE,
  type              TEXT NOT NULL CHECK (type IN ('file', 'folder')),
  size_bytes        INTEGER CHECK (size_bytes >= 0),
  mtime_ns          TEXT,
  inode             TEXT,
  remote_size       INTEGER NOT NULL CHECK (remote_size >= 0),
  remote_updated_at TEXT NOT NULL,
  remote_name       TEXT NOT NULL,
  remote_parent_id  TEXT,
  state             TEXT NOT NULL CHECK (state IN ('synced', 'pending', 'failed')),
  attempts          INTEGER NOT NULL CHECK (attempts >= 0),
  last_error        TEXT,
  updated_at        TEXT NOT NULL,
  CHECK ((size_bytes IS NULL) = (mtime_ns IS NULL) AND (mtime_ns IS NULL) = (inode IS NULL))
) STRICT;

-- locally_deleted: items the user deleted from the mirror under on_local_delete = respect.
-- Invariants: one row per remote id; such an item is not fetched again until \`dlsync restore\`
-- removes its row; the row goes when the remote item goes.
CREATE TABLE locally_deleted (
  remote_id   TEXT PRIMARY KEY NOT NULL,
  path        TEXT NOT NULL,
  deleted_at  TEXT NOT NULL
) STRICT;

-- pending_op: the one local operation the executor is performing (rename, conflict copy,
-- trash, delete), written before the disk is touched and cleared with the store update that
-- follows it. Invariants: at most one row (id = 1); a row at start means a crash between the
-- disk and the store, which recovery settles by looking at the disk before any scan.
CREATE TABLE pending_op (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  op          TEXT NOT NULL CHECK (op IN ('rename', 'conflict_copy', 'trash', 'delete')),
  remote_id   TEXT NOT NULL,
  from_path   TEXT NOT NULL,
  to_path     TEXT,
  inode       TEXT NOT NULL,
  started_at  TEXT NOT NULL
) STRICT;

-- held_deletes: the removals of the last pass that exceeded the big-delete limit.
-- Invariants: empty unless the latest pass was held; each pass replaces the whole table.
CREATE TABLE held_deletes (
  path     TEXT PRIMARY KEY NOT NULL,
  held_at  TEXT NOT NULL
) STRICT;

-- events: what dlsync did, skipped or failed, and why, for \`status\`.
-- Invariants: append-only in seq order; only the newest rows are kept (pruned on append).
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  at         TEXT NOT NULL,
  level      TEXT NOT NULL CHECK (level IN ('info', 'warn', 'error')),
  kind       TEXT NOT NULL,
  path       TEXT,
  remote_id  TEXT,
  message    TEXT NOT NULL
) STRICT;

-- transfers: resumable downloads (the transfer journal), one row per remote file.
-- Invariants: partial_path is relative to the mirror root and lies under .dlsync/partial;
-- the row and its segments are saved in one transaction.
CREATE TABLE transfers (
  file_id        TEXT PRIMARY KEY NOT NULL,
  size_bytes     INTEGER NOT NULL CHECK (size_bytes >= 0),
  etag           TEXT,
  last_modified  TEXT,
  partial_path   TEXT NOT NULL,
  attempts       INTEGER NOT NULL CHECK (attempts >= 0),
  last_error     TEXT,
  updated_at     TEXT NOT NULL
) STRICT;

-- transfer_segments: the byte ranges [start, end) of a transfer assigned to parallel segments.
-- Invariants: ranges of one transfer are disjoint and within [0, size); the first \`durable\`
-- bytes from \`start\` are fsynced in the partial file (0 <= durable <= end - start).
CREATE TABLE transfer_segments (
  file_id  TEXT NOT NULL REFERENCES transfers (file_id) ON DELETE CASCADE,
  start    INTEGER NOT NULL CHECK (start >= 0),
  "end"    INTEGER NOT NULL,
  durable  INTEGER NOT NULL,
  PRIMARY KEY (file_id, start),
  CHECK ("end" > start AND durable >= 0 AND durable <= "end" - start)
) STRICT;
`

/** Exported for the outbox's own tests (src/appstate/outboxSqlite.ts re-exports it). */
export const V2_APP_STATE_OUTBOX = `
-- app_state_outbox: this device's app-state entries not yet written to the service.
-- Invariants: at most one row per remote file (a newer entry replaces the row and takes a
-- higher seq); seq grows across all rows; a row is deleted only when the entry with that
-- seq was written or dropped, so an entry replaced during a write stays queued; entry is
-- a JSON object (see src/appstate/ProgressEntry.ts).
CREATE TABLE app_state_outbox (
  file_id      TEXT PRIMARY KEY NOT NULL CHECK (file_id <> ''),
  seq          INTEGER NOT NULL UNIQUE CHECK (seq > 0),
  entry        TEXT NOT NULL CHECK (json_valid(entry)),
  enqueued_at  INTEGER NOT NULL
) STRICT;
`

const V3_LIVE_TRANSFERS = `
-- live_transfers: what the dlsync holding the instance lock is transferring now, for
-- \`dlsync status\` in another process (see src/store/liveTransfers.ts).
-- Invariants: at most one row (id = 1), written only by the lock holder \`pid\`, replaced as a
-- whole at most once a second while files transfer, deleted when none does and when the run
-- ends. A killed writer leaves its row behind: a reader trusts it only while \`pid\` still
-- holds the lock and \`updated_at\` is recent. \`files\` is a JSON array of the active files.
CREATE TABLE live_transfers (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  pid              INTEGER NOT NULL CHECK (pid > 0),
  updated_at       TEXT NOT NULL,
  completed        INTEGER NOT NULL CHECK (completed >= 0),
  parked           INTEGER NOT NULL CHECK (parked >= 0),
  bytes_per_second INTEGER NOT NULL CHECK (bytes_per_second >= 0),
  files            TEXT NOT NULL CHECK (json_valid(files) AND json_type(files) = 'array')
) STRICT;
`

const V4_PASS_FAILURES = `
-- pass_failures: the items the last completed reconcile left unmirrored for a reason the
-- user must look at (failed downloads and local operations, occupied paths, blocked
-- parents), as \`run --once\` listed them, for \`status\`.
-- Invariants: each completed reconcile replaces the whole table; empty after a clean one.
CREATE TABLE pass_failures (
  path       TEXT PRIMARY KEY NOT NULL,
  remote_id  TEXT,
  reason     TEXT NOT NULL
) STRICT;
`

const V5_SPACE_WAITS = `
-- live_transfers.waiting_for_space: files the running dlsync holds back until the disk has
-- transfers.min_free_space to spare again (published like the rest of the row).
ALTER TABLE live_transfers ADD COLUMN waiting_for_space INTEGER NOT NULL DEFAULT 0 CHECK (waiting_for_space >= 0);
`

const V6_ROOT_CASE_SENSITIVITY = `
-- mirror_root: what the last pass found of the mirror root, for \`status\` (which reads the
-- store alone): whether its names ignore case (sync/caseSensitivity.ts), on which the
-- names, and so the shortened ones, depend.
-- Invariants: at most one row (id 1), absent until a pass has probed the root.
CREATE TABLE mirror_root (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  case_insensitive  INTEGER NOT NULL CHECK (case_insensitive IN (0, 1))
) STRICT;
`

const V7_WEBHOOK_DELIVERIES = `
-- webhook_deliveries: ids (\`webhook-id\`) of verified webhook deliveries the receiver has
-- acted on, so a replay or a redelivery of one is dropped, across restarts too.
-- Invariants: only ids of deliveries whose signature verified; \`keep_until\` (Unix seconds)
-- is past the end of the tolerance window of the newest timestamp seen for the id, so a
-- captured delivery is remembered for as long as it could verify; rows past it are pruned.
CREATE TABLE webhook_deliveries (
  id          TEXT PRIMARY KEY NOT NULL CHECK (id <> ''),
  keep_until  INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_keep_until ON webhook_deliveries (keep_until);
`

const V8_REMOTE_DOWNLOAD_ID = `
-- remote_items.download_id: the service download a file came from (NULL: none, or a row the
-- feed has not reported again since this column was added), so that dlsync knows when every
-- file of one download has landed (the download_complete event).
ALTER TABLE remote_items ADD COLUMN download_id TEXT;
CREATE INDEX remote_items_download ON remote_items (download_id) WHERE download_id IS NOT NULL;
`

const V9_INTAKE_QUEUE = `
-- intakes: the releases handed in through the intake queue (src/intake/, src/store/intakeTables.ts).
-- Invariants: one row per identity (btih:<40 hex> or sha256:<64 hex>), written with its
-- source before anything is sent; phase 'sending' is set before a creation request and left
-- only with its answer stored, so a crash leaves 'sending' and the download is looked up by
-- client_reference (= id) before any new POST; 'removed' is a tombstone; download_id is set
-- once the service accepted it; files (JSON) lists the download's files once it completed;
-- cleanup is what a removal still owes the service (its download record, and its files too).
CREATE TABLE intakes (
  id                   TEXT PRIMARY KEY NOT NULL CHECK (id GLOB 'btih:*' OR id GLOB 'sha256:*'),
  name                 TEXT NOT NULL,
  category             TEXT NOT NULL,
  directory            TEXT NOT NULL,
  via                  TEXT NOT NULL,
  source_kind          TEXT NOT NULL CHECK (source_kind IN ('magnet', 'torrent', 'nzb', 'url')),
  file_name            TEXT,
  source               BLOB NOT NULL,
  info_hash            TEXT,
  phase                TEXT NOT NULL CHECK (phase IN ('new', 'sending', 'selecting', 'parked', 'sent', 'failed', 'removed')),
  paused               INTEGER NOT NULL CHECK (paused IN (0, 1)),
  reason               TEXT,
  not_before           INTEGER,
  selection_id         TEXT,
  selection_expires_at TEXT,
  download_id          TEXT,
  status               TEXT,
  progress             REAL NOT NULL CHECK (progress >= 0 AND progress <= 1),
  size                 INTEGER NOT NULL CHECK (size >= 0),
  file_id              TEXT,
  files                TEXT CHECK (files IS NULL OR (json_valid(files) AND json_type(files) = 'array')),
  added_at             INTEGER NOT NULL,
  completed_at         INTEGER,
  updated_at           INTEGER NOT NULL,
  cleanup              TEXT CHECK (cleanup IN ('record', 'files'))
) STRICT;
CREATE INDEX intakes_phase ON intakes (phase);

-- intake_categories: categories created through a surface (configured ones live in [categories.*]).
CREATE TABLE intake_categories (
  name TEXT PRIMARY KEY NOT NULL CHECK (name <> '')
) STRICT;
`

const V10_POSTER_FILES = `
-- remote_items.poster_url: the item's content-addressed poster URL (NULL: none, or posters off).
ALTER TABLE remote_items ADD COLUMN poster_url TEXT;

-- poster_files: the poster images dlsync wrote beside the videos (src/posters/): sidecars
-- (\`<video>-poster.webp\`) and folder posters (\`poster.webp\`). They are not the user's files
-- and not mirrored items: no local entry covers them.
-- Invariants: one row per path; size_bytes, mtime_ns and inode are what lstat showed right
-- after dlsync wrote the path; only a poster whose fresh lstat still matches is replaced or
-- removed (one the user changed is left alone and forgotten). \`url\` is the poster it holds.
CREATE TABLE poster_files (
  path        TEXT PRIMARY KEY NOT NULL CHECK (path <> '' AND path NOT LIKE '/%'),
  video_id    TEXT NOT NULL,
  url         TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL CHECK (size_bytes >= 0),
  mtime_ns    TEXT NOT NULL,
  inode       TEXT NOT NULL
) STRICT;
`

const V11_REMOTE_CLEANUP = `
-- remote_cleanup: files of the folders under [cleanup] (src/cleanup/), from the moment they
-- were seen verified on disk (synced, lstat matching what dlsync wrote) to their deletion on
-- the service.
-- Invariants: one row per remote id. \`verified_since\` is reset whenever the file is not
-- verified. \`deleting_at\` is set (committed) BEFORE the POST /files/delete that names the
-- file and never cleared: a file so marked is one dlsync deletes on the service, and when
-- its deletion reaches the store the planner forgets the entry and keeps the local copy
-- instead of trashing it. \`done_at\`: the service answered deleted or not_found.
CREATE TABLE remote_cleanup (
  remote_id       TEXT PRIMARY KEY NOT NULL CHECK (remote_id <> ''),
  path            TEXT NOT NULL,
  verified_since  INTEGER NOT NULL,
  deleting_at     INTEGER,
  done_at         INTEGER,
  attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_try_at     INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT
) STRICT;
`

const V12_ARR_FAILURE_REPORTS = `
-- arr_failure_reports: intakes that failed on the service and were reported to Sonarr or
-- Radarr (arr/FailedReports.ts), so each is reported once, after a restart too.
-- Invariants: one row per intake identity (\`btih:<hex>\`); written only after the app accepted
-- the mark-failed call (\`marked\`, with the app) or after the app's queue went on without
-- the item long enough to say it never tracked it (\`untracked\`, app NULL).
CREATE TABLE arr_failure_reports (
  intake_id    TEXT PRIMARY KEY NOT NULL CHECK (intake_id <> ''),
  outcome      TEXT NOT NULL CHECK (outcome IN ('marked', 'untracked')),
  app          TEXT,
  reported_at  INTEGER NOT NULL
) STRICT;
`

export const MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 1, name: "initial schema", sql: V1_INITIAL },
  { version: 2, name: "app-state outbox", sql: V2_APP_STATE_OUTBOX },
  { version: 3, name: "live transfers", sql: V3_LIVE_TRANSFERS },
  { version: 4, name: "pass failures", sql: V4_PASS_FAILURES },
  { version: 5, name: "space waits", sql: V5_SPACE_WAITS },
  { version: 6, name: "root case sensitivity", sql: V6_ROOT_CASE_SENSITIVITY },
  { version: 7, name: "webhook deliveries", sql: V7_WEBHOOK_DELIVERIES },
  { version: 8, name: "remote download ids", sql: V8_REMOTE_DOWNLOAD_ID },
  { version: 9, name: "intake queue", sql: V9_INTAKE_QUEUE },
  { version: 10, name: "poster files", sql: V10_POSTER_FILES },
  { version: 11, name: "remote cleanup", sql: V11_REMOTE_CLEANUP },
  { version: 12, name: "arr failure reports", sql: V12_ARR_FAILURE_REPORTS },
  { version: 13, name: "releases own their files", sql: V13_RELEASES_OWN_FILES }
]

/** The schema version this binary writes. */
export const SCHEMA_VERSION = MIGRATIONS.length
