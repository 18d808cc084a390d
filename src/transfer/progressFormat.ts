/** Human units for progress output (pure): binary sizes, rates and durations. */

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
