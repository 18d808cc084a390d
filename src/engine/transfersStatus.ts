/**
 * The `transfers` section of the status document: the files the running dlsync is
 * transferring, with bytes, percent, rate and ETA, and their totals (pure).
 *
 * Invariant: a published snapshot (src/store/liveTransfers.ts) is shown only while the
 * process that published it still holds the instance lock and it is at most
 * LIVE_TRANSFERS_MAX_AGE_MS old, so a killed, stopped or hung run never shows as active.
 */
import type { Option } from "effect"
import { LIVE_TRANSFERS_MAX_AGE_MS, type LiveTransfers } from "../store/liveTransfers.ts"
import { formatDone, formatEta, formatRate, rateLimitedUntilText } from "../transfer/progressFormat.ts"

export interface ActiveTransfer {
  readonly path: string
  readonly fileId: string
  /** Bytes of the file present so far (resumed bytes included). */
  readonly bytes: number
  readonly size: number
  readonly percent: number
  readonly bytesPerSecond: number
  /** Seconds left at the current rate; null when unknown (no bytes lately). */
  readonly etaSeconds: number | null
  /**
   * Connections fetching the file now: a large file starts on one, steps to transfers.segments
   * and opens more while its rate grows with them (up to transfers.max_connections per host).
   */
  readonly connections: number
  /** Its failed attempts so far (0: none). */
  readonly attempts: number
  /** Waiting for the service's rate limit until then (ISO 8601); absent when not waiting. */
  readonly rateLimitedUntil?: string
}

export interface TransfersStatus {
  /** The dlsync holding the state dir (`run`, `run --once`), or null when none runs. */
  readonly runningPid: number | null
  /** When the running dlsync last published its transfers; null when none is under way. */
  readonly updatedAt: string | null
  readonly active: ReadonlyArray<ActiveTransfer>
  /** Files the running dlsync holds back until the disk has transfers.min_free_space to spare. */
  readonly waitingForSpace: number
  /**
   * The active files together; completed and parked count the files since the running
   * dlsync started. Null when no transfer is under way.
   */
  readonly totals: {
    readonly active: number
    readonly completed: number
    readonly parked: number
    readonly bytes: number
    readonly size: number
    readonly percent: number
    readonly bytesPerSecond: number
    readonly etaSeconds: number | null
  } | null
}

/** What to show, given the last published snapshot, the live lock holder and the time now. */
export const transfersStatus = (
  published: Option.Option<LiveTransfers>,
  holderPid: number | undefined,
  now: number
): TransfersStatus => {
  const runningPid = holderPid ?? null
  const live = published._tag === "Some" ? published.value : undefined
  if (
    live === undefined ||
    live.pid !== holderPid ||
    !(now - Date.parse(live.updatedAt) <= LIVE_TRANSFERS_MAX_AGE_MS)
  ) {
    return { runningPid, updatedAt: null, active: [], waitingForSpace: 0, totals: null }
  }
  const active = live.files.map(
    (f): ActiveTransfer => ({
      path: f.path,
      fileId: f.fileId,
      bytes: f.bytes,
      size: f.size,
      percent: percent(f.bytes, f.size),
      bytesPerSecond: f.bytesPerSecond,
      etaSeconds: eta(f.size - f.bytes, f.bytesPerSecond),
      connections: f.connections ?? 0,
      attempts: f.attempts ?? 0,
      ...(f.rateLimitedUntil === undefined ? {} : { rateLimitedUntil: f.rateLimitedUntil })
    })
  )
  const bytes = active.reduce((n, f) => n + f.bytes, 0)
  const size = active.reduce((n, f) => n + f.size, 0)
  return {
    runningPid,
    updatedAt: live.updatedAt,
    active,
    waitingForSpace: live.waitingForSpace,
    totals: {
      active: active.length,
      completed: live.completed,
      parked: live.parked,
      bytes,
      size,
      percent: percent(bytes, size),
      bytesPerSecond: live.bytesPerSecond,
      etaSeconds: eta(size - bytes, live.bytesPerSecond)
    }
  }
}

/**
 * The section's lines in `dlsync status`, in the units and order of the progress log's
 * totals line (done and parked count since the running dlsync started).
 */
export const renderTransfers = (status: TransfersStatus): ReadonlyArray<string> => {
  const waiting =
    status.waitingForSpace === 0
      ? []
      : [
          `transfers:       PAUSED: ${status.waitingForSpace} file(s) wait for free disk space (transfers.min_free_space)`
        ]
  const t = status.totals
  if (t === null || t.active === 0) {
    if (waiting.length > 0) return waiting
    return [
      status.runningPid === null
        ? "transfers:       none (no dlsync run is active)"
        : `transfers:       none under way (dlsync pid ${status.runningPid} is running)`
    ]
  }
  return [
    ...waiting,
    `transfers:       ${t.active} active, ${t.completed} done, ${t.parked} parked · ${formatDone(t.bytes, t.size)} · ${formatRate(t.bytesPerSecond)} · ETA ${formatEta(t.etaSeconds)} (dlsync pid ${status.runningPid})`,
    ...status.active.map((f) =>
      f.rateLimitedUntil === undefined
        ? `  ${f.path}: ${formatDone(f.bytes, f.size)} · ${formatRate(f.bytesPerSecond)} · ETA ${formatEta(f.etaSeconds)}${connectionsText(f.connections)}`
        : `  ${f.path}: ${formatDone(f.bytes, f.size)} · waiting for the service's rate limit until ${rateLimitedUntilText(Date.parse(f.rateLimitedUntil))}`
    )
  ]
}

// ---------------------------------------------------------------------------------------

const connectionsText = (n: number): string => (n === 0 ? "" : ` · ${n} connection${n === 1 ? "" : "s"}`)

/** Whole percent, rounded down (100 only when complete); a zero-byte file is complete. */
const percent = (bytes: number, size: number): number => (size === 0 ? 100 : Math.floor((bytes * 100) / size))

const eta = (left: number, rate: number): number | null => (rate > 0 ? Math.ceil(left / rate) : null)
