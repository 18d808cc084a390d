import { Schema } from "effect"

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
