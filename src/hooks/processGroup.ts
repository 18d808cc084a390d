/**
 * A hook's process group: the hook is started as the leader of a group of its own (a new
 * session), so everything it starts (`sleep 240 &`, a pipeline, a shell's children) can be
 * signalled at once, and seen gone once none of them runs.
 *
 * A process that ended but is not yet reaped by its parent (a zombie: the group's orphans are
 * reaped by PID 1, tini or systemd, when it gets to them) runs nothing and holds nothing: on
 * Linux it does not count (its state in /proc/<pid>/stat is `Z`); elsewhere any process does.
 * A process that starts a session of its own (`setsid`) leaves the group on purpose and is
 * not followed.
 */
import * as Fs from "node:fs/promises"
import { Clock, Effect } from "effect"

/** Between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5_000

/** How often a group told to stop is looked at while it may still be stopping. */
export const GROUP_POLL_MS = 50

/** Whether a process of the group `pgid` still runs. */
export const groupRuns = (pgid: number): Effect.Effect<boolean> =>
  signalGroup(pgid, 0) ? Effect.promise(() => runningMember(pgid)) : Effect.succeed(false)

/**
 * Ends every process of the group: SIGTERM, then SIGKILL to what is left after KILL_GRACE_MS;
 * returns once none runs, or KILL_GRACE_MS after SIGKILL (a process in uninterruptible sleep
 * ends when its I/O does). Time is Effect's Clock.
 */
export const endGroup = Effect.fnUntraced(function* (pgid: number) {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    if (!signalGroup(pgid, signal)) return
    const deadline = (yield* Clock.currentTimeMillis) + KILL_GRACE_MS
    while (yield* groupRuns(pgid)) {
      if ((yield* Clock.currentTimeMillis) >= deadline) break
      yield* Effect.sleep(GROUP_POLL_MS)
    }
    if (!(yield* groupRuns(pgid))) return
  }
})

// ---------------------------------------------------------------------------------------

/** Sends `signal` to the group; false when no process of it is left (ESRCH) or it is not ours (EPERM). */
const signalGroup = (pgid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** Whether /proc lists a process of the group that is not a zombie; true when /proc cannot tell. */
const runningMember = async (pgid: number): Promise<boolean> => {
  let pids: ReadonlyArray<string>
  try {
    pids = (await Fs.readdir("/proc")).filter((name) => /^\d+$/.test(name))
  } catch {
    return true
  }
  for (const pid of pids) {
    const stat = await Fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (pgrp === String(pgid) && state !== "Z") return true
  }
  return false
}
