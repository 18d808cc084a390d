/**
 * The state database: one better-sqlite3 connection to `<state_dir>/state.db`, migrated at
 * open. Shared by the Store and the transfer journal.
 *
 * Invariants:
 * - The state dir is created 0700; the database and its -wal and -shm files are 0600 (they
 *   hold the account's file names and the cursor).
 * - WAL journal, synchronous=FULL (a committed page or cursor survives power loss),
 *   foreign keys on, busy_timeout set; every transaction that writes begins IMMEDIATE
 *   (writeTransaction.ts): another process's write is waited out (busy_timeout), not a
 *   failure at once.
 * - A damaged file (SQLite's quick_check finds a page it cannot read) fails with
 *   StoreDamaged before anything is read from it or written to it: whether a run would
 *   touch the damaged pages is chance, acting on the rest is not safe.
 * - A schema newer than SCHEMA_VERSION fails with SchemaTooNew before anything is written;
 *   each migration runs in one transaction together with its `user_version` bump, and
 *   processes opening the same fresh state dir at once apply each migration once.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import BetterSqlite3 from "better-sqlite3"
import { Context, Effect, Layer, Predicate, Schedule } from "effect"
import { makeDirsSync } from "../fs/makeDirs.ts"
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.ts"
import { SchemaTooNew, type StateDiskFull, StoreDamaged, StoreOpenError, storeFailureOf } from "./StoreError.ts"
import { writeTransaction } from "./writeTransaction.ts"

export const DATABASE_FILE = "state.db"
export const BUSY_TIMEOUT_MS = 5_000

export class Database extends Context.Service<
  Database,
  {
    readonly db: BetterSqlite3.Database
    readonly path: string
  }
>()("dlsync/store/Database") {
  /** Opens (creating if needed) and migrates the database in `stateDir`; closes it with the scope. */
  static readonly layer = (stateDir: string): Layer.Layer<Database, OpenFailure> =>
    Layer.effect(
      Database,
      Effect.acquireRelease(openDatabase(stateDir), ({ db }) => Effect.sync(() => db.close())).pipe(
        Effect.map((handle) => Database.of(handle))
      )
    )
}

/** Opens and migrates; exported for tests that need to reopen a database by hand. */
export const openDatabase = Effect.fnUntraced(function* (
  stateDir: string
): Effect.fn.Return<{ readonly db: BetterSqlite3.Database; readonly path: string }, OpenFailure> {
  const path = Path.join(stateDir, DATABASE_FILE)
  const fail = (problem: unknown) =>
    storeFailureOf(problem, stateDir) ?? new StoreOpenError({ path, problem: describe(problem) })
  const db = yield* Effect.try({
    try: () => {
      makeDirsSync(stateDir, 0o700)
      // An existing dir keeps its mode: tighten it, the files inside name the account's files.
      Fs.chmodSync(stateDir, 0o700)
      // Create the file 0600 before SQLite does, so it never exists with a wider mode.
      Fs.closeSync(Fs.openSync(path, Fs.constants.O_CREAT | Fs.constants.O_RDWR, 0o600))
      Fs.chmodSync(path, 0o600)
      const db = new BetterSqlite3(path)
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
      return db
    },
    catch: fail
  })
  const version = yield* Effect.try({ try: () => readUserVersion(db), catch: fail }).pipe(
    Effect.tapError(() => Effect.sync(() => db.close()))
  )
  if (version > SCHEMA_VERSION) {
    db.close()
    return yield* new SchemaTooNew({ path, found: version, supported: SCHEMA_VERSION })
  }
  // Switching a new file to WAL needs it to itself: while another process opening the same
  // fresh state dir holds it, SQLite answers BUSY at once (no busy handler) or keeps the old
  // mode. Asked again until it holds.
  yield* Effect.try({
    try: () => {
      const mode = db.pragma("journal_mode = WAL", { simple: true })
      if (mode !== "wal") throw WAL_REFUSED
    },
    catch: (e) => e
  }).pipe(
    Effect.retry({ while: isBusy, schedule: Schedule.spaced("20 millis"), times: BUSY_TIMEOUT_MS / 20 }),
    Effect.mapError(fail),
    Effect.tapError(() => Effect.sync(() => db.close()))
  )
  const damage = yield* Effect.try({ try: () => pagesDamage(db), catch: fail }).pipe(
    Effect.tapError(() => Effect.sync(() => db.close()))
  )
  if (damage !== undefined) {
    db.close()
    return yield* new StoreDamaged({ path, problem: damage })
  }
  yield* Effect.try({
    try: () => {
      db.pragma("synchronous = FULL")
      db.pragma("foreign_keys = ON")
      for (const migration of MIGRATIONS) {
        if (migration.version <= version) continue
        // Under the write lock, the version read again: another process opening the same
        // fresh state dir (a `status` beside a starting run) may have applied it meanwhile.
        writeTransaction(db, () => {
          if (readUserVersion(db) >= migration.version) return
          db.exec(migration.sql)
          db.pragma(`user_version = ${migration.version}`)
        })()
      }
      // SQLite gives -wal/-shm the database's mode; make sure of it all the same.
      for (const suffix of ["-wal", "-shm"]) {
        if (Fs.existsSync(path + suffix)) Fs.chmodSync(path + suffix, 0o600)
      }
    },
    catch: fail
  }).pipe(Effect.tapError(() => Effect.sync(() => db.close())))
  return { db, path }
})

/** Why the database did not open: unreadable, newer, on a full disk, or damaged. */
export type OpenFailure = StoreOpenError | SchemaTooNew | StateDiskFull | StoreDamaged

// ---------------------------------------------------------------------------------------

const readUserVersion = (db: BetterSqlite3.Database): number => {
  const value = db.pragma("user_version", { simple: true })
  if (!Predicate.isNumber(value)) throw new Error(`unexpected user_version ${String(value)}`)
  return value
}

/**
 * SQLite's quick_check over every page (the b-trees' structure, not index contents: a few
 * milliseconds per megabyte); undefined when it says ok, else its first finding. A page
 * SQLite cannot parse at all throws SQLITE_CORRUPT instead, mapped by the caller.
 */
const pagesDamage = (db: BetterSqlite3.Database): string | undefined => {
  const findings = db.pragma("quick_check(1)", { simple: true })
  if (findings === "ok") return undefined
  // Its findings start with a "*** in database main ***" line; one line is what is shown.
  return String(findings)
    .replace(/\*\*\* in database \w+ \*\*\*/g, "")
    .replace(/\s+/g, " ")
    .trim()
}

/** SQLite kept the old journal mode: another connection has the file. */
const WAL_REFUSED = new Error("the journal mode could not be set to WAL: the database is busy")

const isBusy = (e: unknown): boolean =>
  e === WAL_REFUSED || (e instanceof BetterSqlite3.SqliteError && e.code === "SQLITE_BUSY")

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))
