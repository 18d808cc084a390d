/**
 * The `intake` section of the status document (`dlsync status`, `--json`, `/api/status`):
 * the intake queue's items as the apps see them (itemView.ts), one line each in the human
 * rendering for those not yet complete; the completed ones are counted.
 */
import type { IntakeRecord } from "../store/intakeTables.ts"
import type { IntakeState } from "./Intake.ts"
import { itemOf } from "./itemView.ts"

export interface IntakeStatusItem {
  readonly id: string
  readonly name: string
  /** "" for none. */
  readonly category: string
  readonly state: IntakeState
  /** Why it is queued, paused or failed; null otherwise. */
  readonly reason: string | null
  /** Whole percent, 100 only when every file is verified on local disk. */
  readonly percent: number
}

export interface IntakeStatus {
  /** Items by state. */
  readonly counts: Readonly<Partial<Record<IntakeState, number>>>
  readonly items: ReadonlyArray<IntakeStatusItem>
}

/** The queue's live records (not removed), in the order they were added. */
export const intakeStatus = (records: ReadonlyArray<IntakeRecord>, root: string, now: number): IntakeStatus => {
  const counts: Partial<Record<IntakeState, number>> = {}
  const items = records.map((record): IntakeStatusItem => {
    const item = itemOf(record, root, now)
    counts[item.state] = (counts[item.state] ?? 0) + 1
    return {
      id: item.id,
      name: item.name,
      category: item.category,
      state: item.state,
      reason: item.reason,
      percent: item.state === "completed" ? 100 : Math.min(99, Math.floor(item.progress * 100))
    }
  })
  return { counts, items }
}

/** Lines of `dlsync status`; none when the queue is empty. */
export const renderIntake = (status: IntakeStatus): ReadonlyArray<string> => {
  if (status.items.length === 0) return []
  const counts = Object.entries(status.counts).map(([state, n]) => `${n} ${state}`)
  const open = status.items.filter((i) => i.state !== "completed")
  return [
    `intake:          ${status.items.length} item(s): ${counts.join(", ")}`,
    ...open.slice(0, MAX_LINES).map((i) => {
      const category = i.category === "" ? "" : ` (${i.category})`
      const reason = i.reason === null ? "" : ` — ${i.reason}`
      return `  ${i.name}${category}: ${i.state} ${i.percent}%${reason}`
    }),
    ...(open.length > MAX_LINES ? [`  … and ${open.length - MAX_LINES} more (see --json)`] : [])
  ]
}

const MAX_LINES = 50
