/**
 * The failed intakes already reported to Sonarr or Radarr (table `arr_failure_reports`, see
 * migrations.ts), so that arr/FailedReports.ts reports each once, across restarts.
 * Invariant: a row is written only once the outcome is final; `record` of a known id keeps
 * the first row.
 */
import type BetterSqlite3 from "better-sqlite3"

export type ArrReportOutcome = { readonly outcome: "marked"; readonly app: string } | { readonly outcome: "untracked" }

export interface ArrFailureReportTable {
  readonly isReported: (intakeId: string) => boolean
  readonly record: (intakeId: string, outcome: ArrReportOutcome, atMillis: number) => void
}

export const makeArrFailureReportTable = (db: BetterSqlite3.Database): ArrFailureReportTable => {
  const q = {
    has: db.prepare("SELECT 1 FROM arr_failure_reports WHERE intake_id = ?").pluck(),
    insert: db.prepare(
      "INSERT OR IGNORE INTO arr_failure_reports (intake_id, outcome, app, reported_at) VALUES (?, ?, ?, ?)"
    )
  }
  return {
    isReported: (intakeId) => q.has.get(intakeId) !== undefined,
    record: (intakeId, report, atMillis) => {
      q.insert.run(intakeId, report.outcome, report.outcome === "marked" ? report.app : null, atMillis)
    }
  }
}
