/**
 * An intake record as the apps see it (IntakeItem): its state, progress and local paths.
 * Pure: the runner (IntakeRunner.ts) keeps the record's service status, local progress and
 * completion up to date; this only reads them.
 *
 * - completed: `completedAt` is set, which the runner does only once every file of the
 *   download was verified on local disk.
 * - failed: the service failed, canceled or expired it (phase failed), or blocked it (kept
 *   polling: an unblocked download goes on).
 * - mirroring: the service completed it; dlsync is copying it (progress: local bytes).
 * - downloading: the service has it (progress: the service's).
 * - queued: still in dlsync's queue (a cap, a rate limit, a selection, a cache check).
 * - contentPath: the file of a single-file release, else its folder; never savePath.
 * - etaSeconds: 0 once completed; for an item waiting in dlsync's queue until a known time
 *   (an account cap resetting, a rate limit), the seconds until it goes — the apps show it
 *   as the time left; otherwise unknown (null).
 */
import * as NodePath from "node:path"
import type { IntakeRecord } from "../store/intakeTables.ts"
import type { IntakeItem, IntakeState } from "./Intake.ts"

export const itemOf = (record: IntakeRecord, root: string, now: number): IntakeItem => {
  const savePath = savePathOf(root, record.category)
  const { state, reason } = stateOf(record)
  const files = record.files ?? []
  const size = record.size > 0 ? record.size : files.reduce((n, f) => n + f.size, 0)
  const progress = state === "completed" ? 1 : clamp(record.progress)
  const local = files.reduce((n, f) => n + f.localBytes, 0)
  return {
    id: record.id,
    name: record.name,
    category: record.category,
    state,
    reason,
    progress,
    size,
    remaining: state === "completed" ? 0 : Math.max(0, size - local),
    etaSeconds: state === "completed" ? 0 : state === "queued" ? secondsUntil(record.notBefore, now) : null,
    addedAt: record.addedAt,
    completedAt: record.completedAt,
    expectedStartAt: state === "queued" ? record.notBefore : null,
    savePath,
    contentPath: NodePath.join(savePath, contentRelative(record)),
    downloadId: record.downloadId,
    files: files.map((f) => ({ name: f.path, size: f.size, localBytes: f.localBytes }))
  }
}

/** A category's folder: `<root>/<category>`. */
export const savePathOf = (root: string, category: string): string => NodePath.join(root, category)

/** Service statuses that mean it works on the download (or waits in its own queue). */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set(["queued", "processing", "downloading", "finalizing"])

// ---------------------------------------------------------------------------------------

const stateOf = (record: IntakeRecord): { readonly state: IntakeState; readonly reason: string | null } => {
  if (record.completedAt !== null) return { state: "completed", reason: null }
  if (record.phase === "failed") return { state: "failed", reason: record.reason ?? "failed on the service" }
  if (record.status === "blocked") {
    return { state: "failed", reason: record.reason ?? "blocked by the service: the account needs attention" }
  }
  if (record.paused) return { state: "paused", reason: record.reason ?? "paused" }
  if (record.phase === "sent") {
    if (record.status === "completed") return { state: "mirroring", reason: null }
    return { state: "downloading", reason: record.status === "queued" ? "queued on the service" : null }
  }
  return { state: "queued", reason: record.reason }
}

/** The release below its category folder: the mirrored files' common first segment, else the name. */
const contentRelative = (record: IntakeRecord): string => {
  const files = record.files ?? []
  const first = files[0]?.path.split("/")[0]
  if (first !== undefined && first !== "") {
    const single = files.length === 1 && !(files[0]?.path.includes("/") ?? false)
    if (single || files.every((f) => f.path.startsWith(`${first}/`))) return first
  }
  const directoryBelow = record.directory.startsWith(`${record.category}/`)
    ? record.directory.slice(record.category.length + 1).split("/")[0]
    : undefined
  return directoryBelow ?? safeSegment(record.name)
}

const safeSegment = (name: string): string => {
  const cleaned = name.replaceAll("/", "_").trim()
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "_" : cleaned
}

const secondsUntil = (at: number | null, now: number): number | null =>
  at === null ? null : Math.max(0, Math.ceil((at - now) / 1000))

const clamp = (n: number): number => (Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0)
