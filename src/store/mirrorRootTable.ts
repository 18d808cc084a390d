/**
 * What the last pass found of the mirror root (table `mirror_root`, see migrations.ts):
 * whether its names ignore case, so that `status`, which reads the store alone, maps the
 * remote tree to the names the pass gave (and shortened).
 * Invariant: one row at most, written by each pass after its case probe.
 */
import type BetterSqlite3 from "better-sqlite3"
import { Effect } from "effect"

export interface MirrorRootTable {
  readonly mirrorRoot: {
    /** Whether the root ignores case, as the last pass found it; null before any pass probed it. */
    readonly caseInsensitive: Effect.Effect<boolean | null>
    readonly recordCaseInsensitive: (caseInsensitive: boolean) => Effect.Effect<void>
  }
}

export const makeMirrorRootTable = (db: BetterSqlite3.Database): MirrorRootTable => {
  const q = {
    get: db.prepare<[], { case_insensitive: number }>("SELECT case_insensitive FROM mirror_root WHERE id = 1"),
    put: db.prepare<[number]>("INSERT OR REPLACE INTO mirror_root (id, case_insensitive) VALUES (1, ?)")
  }
  return {
    mirrorRoot: {
      caseInsensitive: Effect.sync(() => {
        const row = q.get.get()
        return row === undefined ? null : row.case_insensitive === 1
      }),
      recordCaseInsensitive: (caseInsensitive) => Effect.sync(() => void q.put.run(caseInsensitive ? 1 : 0))
    }
  }
}
