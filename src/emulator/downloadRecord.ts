/**
 * One download as the emulator keeps it, its status predicates and its JSON form (the
 * spec's Download object).
 */
import { formatMicros } from "./clock.ts"
import type { PlannedFile, Source, SourceType } from "./downloadsSources.ts"

export type DownloadStatus =
  | "queued"
  | "processing"
  | "downloading"
  | "finalizing"
  | "completed"
  | "failed"
  | "canceled"
  | "blocked"

export interface DownloadError {
  readonly code: string
  readonly message: string
}

export interface DownloadRecord {
  readonly id: string
  readonly seq: number
  readonly userId: string
  attempt: number
  status: DownloadStatus
  readonly name: string
  readonly type: SourceType
  readonly sourceKind: Source["type"]
  readonly folder: string | null
  readonly files: ReadonlyArray<PlannedFile>
  readonly sizeBytes: number
  progress: number
  fileId: string | null
  activity: "seeding" | null
  error: DownloadError | null
  readonly clientReference: string | null
  readonly webhookUrl: string | null
  readonly directory: string
  readonly credential: string
  readonly failsWhileDownloading: boolean
  /** Microseconds. */
  readonly createdAt: number
  updatedAt: number
  /** Emulator ms when the current state began. */
  stageStartedAt: number
}

const ACTIVE: ReadonlySet<DownloadStatus> = new Set(["processing", "downloading", "finalizing"])
export const isActive = (status: DownloadStatus): boolean => ACTIVE.has(status)
export const canCancel = (status: DownloadStatus): boolean =>
  status === "queued" || status === "blocked" || isActive(status)
export const canRetry = (status: DownloadStatus): boolean => status === "failed" || status === "canceled"

export const downloadJson = (r: DownloadRecord) => ({
  id: r.id,
  attempt: r.attempt,
  status: r.status,
  can_cancel: canCancel(r.status),
  can_retry: canRetry(r.status),
  name: r.name,
  type: r.type,
  source_type: r.sourceKind,
  size_bytes: r.sizeBytes,
  progress: Math.round(r.progress * 1000) / 1000,
  file_id: r.fileId,
  activity: r.activity,
  error: r.error,
  client_reference: r.clientReference,
  webhook_url: r.webhookUrl,
  directory: r.directory,
  created_at: formatMicros(r.createdAt),
  updated_at: formatMicros(r.updatedAt)
})
