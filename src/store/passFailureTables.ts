/**
 * What the last completed reconcile left unmirrored (table `pass_failures`, see
 * migrations.ts), as `run --once` listed it, so that `status` tells the same after the run.
 * Invariant: the table holds exactly the last reconcile's list; `replace` swaps it whole in
 * one transaction.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect, Schema } from "effect"
import { writeTransaction } from "./writeTransaction.ts"

/** An item a reconcile left unmirrored. */
export const PassFailure = Schema.Struct({
  path: Schema.String,
  remoteId: Schema.NullOr(Schema.String),
  reason: Schema.String
})
export type PassFailure = typeof PassFailure.Type

export interface PassFailureTables {
  readonly passFailures: {
    readonly replace: (failures: ReadonlyArray<PassFailure>) => Effect.Effect<void>
    readonly list: Effect.Effect<ReadonlyArray<PassFailure>>
  }
}

export const makePassFailureTables = (db: BetterSqlite3.Database): PassFailureTables => {
  const q = {
    clear: db.prepare("DELETE FROM pass_failures"),
    put: db.prepare(
      "INSERT OR REPLACE INTO pass_failures (path, remote_id, reason) VALUES (@path, @remote_id, @reason)"
    ),
    all: db.prepare("SELECT path, remote_id, reason FROM pass_failures ORDER BY path")
  }
  const replace = writeTransaction(db, (failures: ReadonlyArray<PassFailure>) => {
    q.clear.run()
    for (const f of failures) q.put.run(encodeRow(f))
  })
  return {
    passFailures: {
      replace: (failures) => Effect.sync(() => replace(failures)),
      list: Effect.sync(() => q.all.all().map((raw) => decodeRow(raw)))
    }
  }
}

// ---------------------------------------------------------------------------------------

const PassFailureRow = PassFailure.pipe(Schema.encodeKeys({ remoteId: "remote_id" }))
const encodeRow = Schema.encodeSync(PassFailureRow)
const decodeRow = Schema.decodeUnknownSync(PassFailureRow)
