/**
 * A release as every surface reads it (IntakeItem), derived in this one place from the
 * store: its record (the intake's phase and what the service said), its files (the remote
 * items with its download_id, with the mirror's local entries) and the live transfers.
 * Pure: the caller reads those and passes the time.
 *
 * State:
 * - completed: `completedAt` is set, which the runner does only once every file of the
 *   download was verified on local disk (releaseCompletion.ts);
 * - failed: the service failed, canceled or expired it, or its files could not be given a
 *   path of their own (phase failed), or the service blocked it (still followed);
 * - paused · queued (in dlsync's queue: a cap, a rate limit, a selection, a cache check);
 * - downloading: the service has it and works on it;
 * - mirroring: the service completed it; the mirror copies its files.
 *
 * Progress is one number over both phases: the service's download fills [0, ½], the
 * mirror's copy (bytes verified on disk, plus what running transfers have so far) [½, 1),
 * and only completion is 1. `remaining` and `rate`/`etaSeconds` follow the same phase.
 */
import * as NodePath from "node:path"
import type { IntakeRecord } from "../store/intakeTables.ts"
import type { ReleaseFile } from "../store/releaseFiles.ts"
import type { IntakeItem, IntakeState } from "./Intake.ts"
import { contentRootOf, expectedContentRoot } from "./releaseFolder.ts"

/** Bytes so far and rate of the files being transferred now, by remote id. */
export type LiveBytes = ReadonlyMap<string, { readonly bytes: number; readonly bytesPerSecond: number }>

export interface ViewInput {
  readonly record: IntakeRecord
  /** Its files in the store (empty until the feed reported them). */
  readonly files: ReadonlyArray<ReleaseFile>
  readonly live: LiveBytes
  /** The mirror root, absolute. */
  readonly root: string
  readonly now: number
  /** The progress an earlier reading showed (0 for none): progress never goes below it. */
  readonly floor?: number
}

export const releaseView = ({ record, files, live, root, now, floor = 0 }: ViewInput): IntakeItem => {
  const { state, reason } = stateOf(record)
  const known = files.length > 0
  const size = known ? files.reduce((n, f) => n + f.size, 0) : Math.max(0, record.size)
  const local = files.map((file) => ({ file, bytes: localBytes(file, live) }))
  const localTotal = local.reduce((n, f) => n + f.bytes, 0)
  const mirroring = state === "mirroring" || (state === "failed" && record.serviceCompletedAt !== null)
  const progress =
    state === "completed"
      ? 1
      : Math.max(
          Math.min(floor, HALF + HALF * BELOW_DONE),
          mirroring
            ? HALF + HALF * (size === 0 ? 0 : Math.min(localTotal / size, BELOW_DONE))
            : HALF * clamp(record.progress)
        )
  const mirrorRate = local.reduce((n, f) => n + (live.get(f.file.remoteId)?.bytesPerSecond ?? 0), 0)
  const rate = state === "mirroring" ? mirrorRate : state === "downloading" ? Math.max(0, record.serviceRate) : 0
  const content = contentPathOf(record, files)
  const contentPath = NodePath.join(root, content)
  const savePath = NodePath.dirname(contentPath)
  return {
    id: record.id,
    name: record.name,
    category: record.category,
    via: record.via,
    state,
    reason,
    progress,
    size,
    remaining: state === "completed" ? 0 : Math.round(size * (1 - progress)),
    rate,
    etaSeconds: etaOf(state, record, size, localTotal, rate, now),
    addedAt: record.addedAt,
    completedAt: record.completedAt,
    expectedStartAt: state === "queued" ? record.notBefore : null,
    savePath,
    contentPath,
    downloadId: record.downloadId,
    selection:
      record.phase === "selecting" && record.selectionItems !== null && record.selectionChoice === null
        ? { expiresAt: record.selectionExpiresAt, items: record.selectionItems }
        : null,
    files: local.map(({ file, bytes }) => ({
      name: NodePath.relative(savePath, NodePath.join(root, localPath(file)))
        .split(NodePath.sep)
        .join("/"),
      size: file.size,
      localBytes: state === "completed" ? file.size : bytes
    }))
  }
}

/**
 * The release's content root below the mirror root: the one fixed at completion, else that
 * of its files (their local paths once the mirror placed every one, else the service's),
 * else where the service is expected to put it.
 */
export const contentPathOf = (record: IntakeRecord, files: ReadonlyArray<ReleaseFile>): string => {
  if (record.contentPath !== null) return record.contentPath
  const placed = files.every((f) => f.local !== null)
  const root = contentRootOf(placed ? files.map(localPath) : files.map((f) => f.remotePath), record.directoryCategory)
  return root ?? expectedContentRoot(record.directory, record.directoryCategory, record.name)
}

/** Whether a file is on disk as dlsync wrote it, by the store: synced, at its remote size. */
export const isVerified = (file: ReleaseFile): boolean =>
  file.local !== null && file.local.state === "synced" && file.local.writtenSize === file.size

// ---------------------------------------------------------------------------------------

const HALF = 0.5

/** The largest fraction of the mirror's half shown before completion. */
const BELOW_DONE = 0.998

const localPath = (file: ReleaseFile): string => file.local?.path ?? file.remotePath

/** Bytes of a file on disk: its size once verified; before, its running transfer's bytes, never all of them. */
const localBytes = (file: ReleaseFile, live: LiveBytes): number => {
  if (isVerified(file)) return file.size
  const transferring = live.get(file.remoteId)?.bytes ?? 0
  return Math.min(transferring, Math.max(0, file.size - 1))
}

const stateOf = (record: IntakeRecord): { readonly state: IntakeState; readonly reason: string | null } => {
  if (record.completedAt !== null) return { state: "completed", reason: null }
  if (record.phase === "failed") return { state: "failed", reason: record.reason ?? "failed on the service" }
  if (record.status === "blocked") {
    return { state: "failed", reason: record.reason ?? "blocked by the service: the account needs attention" }
  }
  if (record.paused) return { state: "paused", reason: record.reason ?? "paused" }
  if (record.phase === "sent") {
    if (record.serviceCompletedAt !== null) return { state: "mirroring", reason: null }
    return { state: "downloading", reason: record.status === "queued" ? "queued on the service" : null }
  }
  return { state: "queued", reason: record.reason }
}

const etaOf = (
  state: IntakeState,
  record: IntakeRecord,
  size: number,
  localTotal: number,
  rate: number,
  now: number
): number | null => {
  switch (state) {
    case "completed":
      return 0
    case "queued":
      return record.notBefore === null ? null : Math.max(0, Math.ceil((record.notBefore - now) / 1000))
    case "downloading":
      return rate > 0 ? Math.ceil((size * (1 - clamp(record.progress))) / rate) : null
    case "mirroring":
      return rate > 0 ? Math.ceil(Math.max(0, size - localTotal) / rate) : null
    default:
      return null
  }
}

const clamp = (n: number): number => (Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0)
