/**
 * A transaction that writes takes SQLite's write lock when it begins (BEGIN IMMEDIATE).
 *
 * Why: the state database has other writers (a `dlsync add` or `pause` beside the running
 * daemon). A deferred transaction that reads before its first write holds a snapshot; when
 * another connection commits meanwhile, SQLite cannot upgrade that snapshot and answers
 * "database is locked" at once, without calling the busy handler. Taken at BEGIN, the lock
 * waits out the other writer through busy_timeout instead.
 */
import type BetterSqlite3 from "better-sqlite3"

export const writeTransaction = <Args extends Array<unknown>, A>(
  db: BetterSqlite3.Database,
  body: (...args: Args) => A
): ((...args: Args) => A) => {
  const transaction = db.transaction(body)
  return (...args) => transaction.immediate(...args)
}
