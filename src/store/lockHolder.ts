/**
 * Who holds a pid lock file, and whether that process still runs. Shared by the instance
 * lock (one dlsync per state dir) and the token-refresh lock. A pid alone is not enough:
 * after a reboot or a wrap-around another process may carry it, so the holder's start time
 * (Linux: /proc/<pid>/stat) is written beside it and compared.
 */
import * as Fs from "node:fs"

export interface LockHolder {
  readonly pid: number
  /** Clock ticks since boot when the holder started; undefined where /proc is not available. */
  readonly startTime: string | undefined
}

/** The process start time in clock ticks since boot (Linux), to tell a reused pid apart. */
export const processStartTime = (pid: number): string | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
  } catch {
    return undefined
  }
}

/**
 * Whether another process's lock is still held: its pid exists and, when both start times
 * are known, it is the same process that wrote the lock. (A holder with this process's
 * own pid is the caller's to judge.)
 */
export const otherHolderRunning = (holder: LockHolder): boolean => {
  try {
    process.kill(holder.pid, 0)
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "ESRCH") return false
  }
  const now = processStartTime(holder.pid)
  return holder.startTime === undefined || now === undefined || now === holder.startTime
}
