/** Human units for progress output (pure): binary sizes, rates, durations and rate-limit waits. */
import type { TransferEvent } from "./ProgressTracker.ts"

export const formatBytes = (n: number): string => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let v = n
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`
}

export const formatRate = (bytesPerSecond: number): string => `${formatBytes(bytesPerSecond)}/s`

export const formatEta = (seconds: number | null): string => {
  if (seconds === null || !Number.isFinite(seconds)) return "--:--"
  const s = Math.max(0, Math.round(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = s % 60
  const two = (x: number) => String(x).padStart(2, "0")
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${two(m)}:${two(sec)}`
}

/** `done/size (pct)`; a zero-byte file is 100 %. */
export const formatDone = (done: number, size: number): string =>
  `${formatBytes(done)}/${formatBytes(size)} ${size === 0 ? 100 : Math.floor((done * 100) / size)}%`

/** When a rate-limit wait ends, as UTC time (ISO 8601, rounded up to the second). */
export const rateLimitedUntilText = (until: number): string =>
  `${new Date(Math.ceil(until / 1000) * 1000).toISOString().slice(0, 19)}Z`

/** A file waits for the service's rate limit: until when (UTC, to the second) and for how long. */
export const rateLimitedLine = (e: Extract<TransferEvent, { readonly _tag: "RateLimited" }>): string =>
  `waiting for the service's rate limit: ${e.name} until ${rateLimitedUntilText(e.until)} (${Math.ceil(e.delayMs / 1000)} s)`
