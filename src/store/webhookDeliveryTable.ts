/**
 * The webhook ids the receiver has acted on (table `webhook_deliveries`, see migrations.ts),
 * so a replayed or redelivered event is dropped, after a restart too.
 *
 * Invariants: `remember` is one transaction: it prunes the rows whose `keep_until` has
 * passed, then either records a new id (true) or finds it recorded and only moves its
 * `keep_until` later (false). The table holds only ids still inside some delivery's
 * replay window, so it stays as small as the deliveries of a few minutes.
 */
import type BetterSqlite3 from "better-sqlite3"

export interface WebhookDeliveryTable {
  /** Records `id` until `keepUntil` (Unix seconds); false when it was already recorded. */
  readonly remember: (id: string, keepUntil: number, nowSeconds: number) => boolean
  /** Ids recorded now (for tests and `status`). */
  readonly count: () => number
}

export const makeWebhookDeliveryTable = (db: BetterSqlite3.Database): WebhookDeliveryTable => {
  const q = {
    prune: db.prepare("DELETE FROM webhook_deliveries WHERE keep_until < ?"),
    insert: db.prepare("INSERT OR IGNORE INTO webhook_deliveries (id, keep_until) VALUES (?, ?)"),
    extend: db.prepare("UPDATE webhook_deliveries SET keep_until = max(keep_until, ?) WHERE id = ?"),
    count: db.prepare("SELECT count(*) AS n FROM webhook_deliveries").pluck()
  }
  const remember = db.transaction((id: string, keepUntil: number, nowSeconds: number): boolean => {
    q.prune.run(nowSeconds)
    if (q.insert.run(id, keepUntil).changes === 1) return true
    q.extend.run(keepUntil, id)
    return false
  })
  return {
    remember: (id, keepUntil, nowSeconds) => remember(id, keepUntil, nowSeconds),
    count: () => Number(q.count.get())
  }
}
