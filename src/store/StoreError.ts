import * as Path from "node:path"
import { Predicate, Schema } from "effect"

/** The state database cannot be opened or prepared (path, permissions, corruption). */
export class StoreOpenError extends Schema.TaggedError<StoreOpenError>()("StoreOpenError", {
  path: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return `cannot open the state database ${this.path}: ${this.problem}`
  }
}

/** The database was written by a newer dlsync; it is left untouched. */
export class SchemaTooNew extends Schema.TaggedError<SchemaTooNew>()("SchemaTooNew", {
  path: Schema.String,
  found: Schema.Int,
  supported: Schema.Int
}) {
  override get message(): string {
    return (
      `the state database ${this.path} has schema version ${this.found}, newer than the ` +
      `${this.supported} this dlsync knows: it was written by a newer dlsync. Upgrade dlsync ` +
      `(the database is left untouched).`
    )
  }
}

/** The state dir's file system is full; temporary (exit 75): dlsync works again once space is freed. */
export class StateDiskFull extends Schema.TaggedError<StateDiskFull>()("StateDiskFull", {
  stateDir: Schema.String
}) {
  override get message(): string {
    return `the disk of the state dir ${this.stateDir} is full: free some space there; dlsync can go on once there is room`
  }
}

/** The state database is damaged (SQLite says malformed or not a database); it is left as it is. */
export class StoreDamaged extends Schema.TaggedError<StoreDamaged>()("StoreDamaged", {
  path: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return (
      `the state database ${this.path} is damaged (${this.problem}): move it aside ` +
      `(mv ${this.path} ${this.path}.broken) and run dlsync again; it re-adopts the mirror's files without downloading them`
    )
  }
}

/**
 * The store failure a thrown SQLite or file-system error stands for: a full disk or a
 * damaged database; undefined for anything else (a bug, left as a defect).
 */
export const storeFailureOf = (error: unknown, stateDir: string): StateDiskFull | StoreDamaged | undefined => {
  const code = Predicate.hasProperty(error, "code") && Predicate.isString(error.code) ? error.code : undefined
  if (code === undefined) return undefined
  if (DISK_FULL_CODES.has(code)) return new StateDiskFull({ stateDir })
  if (DAMAGED_CODES.has(code)) {
    return new StoreDamaged({
      path: Path.join(stateDir, "state.db"),
      problem: error instanceof Error ? error.message : code
    })
  }
  return undefined
}

const DISK_FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"])
const DAMAGED_CODES = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT_SEQUENCE"])
