/**
 * The `intake` section of the status document (`dlsync status`, `--json`, `/api/status`):
 * the releases as every surface sees them (releaseItems.ts), one line each in the human
 * rendering for those not yet complete (state, the one progress over both phases, the rate
 * and the time left when known); the completed ones are counted.
 */
import { formatEta, formatRate } from "../transfer/progressFormat.ts"
import type { IntakeItem, IntakeState } from "./Intake.ts"

export interface IntakeStatusItem {
  readonly id: string
  readonly name: string
  /** "" for none. */
  readonly category: string
  /** The surface that added it. */
  readonly via: string
  readonly state: IntakeState
  /** Why it is queued, paused or failed; null otherwise. */
  readonly reason: string | null
  /** Whole percent over both phases (the service's download, then the mirror's copy); 100 only when every file is verified on local disk. */
  readonly percent: number
  readonly size: number
  /** Bytes still to come, over both phases (`size × (1 − progress)`). */
  readonly remaining: number
  /** Bytes per second now (the service's, then the mirror's). */
  readonly rate: number
  /** Seconds to completion, or null when unknown. */
  readonly etaSeconds: number | null
  /** The release's path on local disk (its file, or its folder). */
  readonly contentPath: string
  /** A selection stage waiting for the user's choice (`Intake.choose`); null otherwise. */
  readonly selection: IntakeItem["selection"]
}

export interface IntakeStatus {
  /** Items by state. */
  readonly counts: Readonly<Partial<Record<IntakeState, number>>>
  readonly items: ReadonlyArray<IntakeStatusItem>
}

/** The queue's live releases (not removed), in the order they were added. */
export const intakeStatus = (releases: ReadonlyArray<IntakeItem>): IntakeStatus => {
  const counts: Partial<Record<IntakeState, number>> = {}
  const items = releases.map((item): IntakeStatusItem => {
    counts[item.state] = (counts[item.state] ?? 0) + 1
    return {
      id: item.id,
      name: item.name,
      category: item.category,
      via: item.via,
      state: item.state,
      reason: item.reason,
      percent: item.state === "completed" ? 100 : Math.min(99, Math.floor(item.progress * 100)),
      size: item.size,
      remaining: item.remaining,
      rate: item.rate,
      etaSeconds: item.etaSeconds,
      contentPath: item.contentPath,
      selection: item.selection
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
      const rate = i.rate > 0 ? `, ${formatRate(i.rate)}` : ""
      const left =
        i.etaSeconds === null
          ? ""
          : i.state === "queued"
            ? `, goes in ${formatEta(i.etaSeconds)}`
            : `, ${formatEta(i.etaSeconds)} left`
      return `  ${i.name}${category}: ${i.state} ${i.percent}%${rate}${left}${reason}`
    }),
    ...(open.length > MAX_LINES ? [`  … and ${open.length - MAX_LINES} more (see --json)`] : [])
  ]
}

const MAX_LINES = 50
