/**
 * The figures behind the standard `process_*` metrics every Prometheus client exports, read
 * when `/metrics` is scraped. Open and max fds come from /proc (Linux only; left out elsewhere,
 * as the official clients do). The start time is the process's time origin, not a clock
 * reading, so it is the same at every scrape.
 */
import * as Fs from "node:fs"

export interface ProcessFigures {
  readonly residentMemoryBytes: number
  /** User + system CPU seconds, all threads. */
  readonly cpuSeconds: number
  readonly startTimeSeconds: number
  readonly openFds: number | undefined
  readonly maxFds: number | undefined
}

export const readProcessMetrics = (): ProcessFigures => {
  const cpu = process.cpuUsage()
  return {
    residentMemoryBytes: process.memoryUsage.rss(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    startTimeSeconds: performance.timeOrigin / 1000,
    openFds: openFds(),
    maxFds: maxFds()
  }
}

/** Entries of /proc/self/fd, less the one the listing itself opens. */
const openFds = (): number | undefined => {
  try {
    return Fs.readdirSync("/proc/self/fd").length - 1
  } catch {
    return undefined
  }
}

/** The soft limit on open files (RLIMIT_NOFILE), from /proc/self/limits. */
const maxFds = (): number | undefined => {
  try {
    const line = Fs.readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"))
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0]
    return soft === undefined || soft === "unlimited" ? undefined : Number(soft)
  } catch {
    return undefined
  }
}
