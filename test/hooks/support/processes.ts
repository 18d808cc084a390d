/**
 * Looks at real processes for the hook tests: whether a process or any process of a group
 * still runs (in /proc, a zombie waiting for PID 1 to reap it does not), and a wait on a
 * condition that polls the real world (files a hook writes) whatever clock the test runs on.
 */
import * as Fs from "node:fs"
import { Effect } from "effect"

/** Whether the process `pid` runs (its /proc state is not Z). */
export const processAlive = (pid: number): boolean => {
  const stat = statOf(String(pid))
  return stat !== undefined && stat.state !== "Z"
}

/** Whether a process of the group `pgid` runs (`kill -0 -pgid`, then /proc for zombies). */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  return Fs.readdirSync("/proc").some((pid) => {
    const stat = /^\d+$/.test(pid) ? statOf(pid) : undefined
    return stat !== undefined && stat.pgrp === pgid && stat.state !== "Z"
  })
}

/** The number a hook wrote into `file` (a pid), once the file holds a whole line. */
export const pidIn = (file: string): number | undefined => {
  const text = Fs.existsSync(file) ? Fs.readFileSync(file, "utf8") : ""
  return text.endsWith("\n") ? Number(text.trim()) : undefined
}

/** Waits, on real time, until `value()` is defined; dies naming `what` after 20 s. */
export const until = <A>(value: () => A | undefined, what: string): Effect.Effect<A> =>
  Effect.promise(async () => {
    for (let i = 0; i < 2_000; i++) {
      const found = value()
      if (found !== undefined) return found
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    throw new Error(`never happened: ${what}`)
  })

/** State and group of a process from /proc/<pid>/stat ("pid (comm) state ppid pgrp …"). */
const statOf = (pid: string): { readonly state: string; readonly pgrp: number } | undefined => {
  let text: string
  try {
    text = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  const [state = "", , pgrp = ""] = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { state, pgrp: Number(pgrp) }
}
