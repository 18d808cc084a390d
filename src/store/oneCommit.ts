/**
 * Many store writes made durable by one commit. The state database is synchronous=FULL: each
 * write transaction ends with an fsync of the WAL (≈ 5 ms on this project's test machine),
 * so recording 2,000 small files one transaction each would cost 10 s. Within `inOneCommit`
 * every write of the effect (its own transactions become savepoints) is committed together
 * at its end: durable when it returns, not before.
 *
 * The caller runs no two of these at once, and nothing slow inside: the write lock is held
 * throughout (BEGIN IMMEDIATE, see writeTransaction.ts), and writes other fibers make on the
 * same connection meanwhile commit with it. The commit happens whether the effect succeeds,
 * fails or is interrupted: what was written stays written, as it would have one by one.
 */
import { Effect } from "effect"
import { Database } from "./Database.ts"

export const inOneCommit = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Database> =>
  Database.use(({ db }) =>
    db.inTransaction
      ? effect
      : Effect.acquireUseRelease(
          Effect.sync(() => db.exec("BEGIN IMMEDIATE")),
          () => effect,
          () =>
            Effect.sync(() => {
              if (db.inTransaction) db.exec("COMMIT")
            })
        )
  )
