/**
 * What a supervisor's SIGTERM leaves behind: starts a command line as given, waits until
 * dlsync has run a pass and holds its state lock, records the whole process tree under
 * the started process (from /proc, with start times, so a reused pid is not taken for a
 * survivor), sends SIGTERM to the started process only, and reports its exit, the
 * processes of that tree still running and whether the lock is still there. Survivors are
 * killed after being recorded, so a failing case leaves nothing running.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { waitUntil } from "../integration/harness.ts"

export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  /** Start time in clock ticks since boot: tells a process from a later one with its pid. */
  readonly start: string
  /** The binary it runs (/proc/<pid>/exe, resolved). */
  readonly exe: string
  readonly cmdline: string
}

export interface Stopped {
  /** The started process, then everything below it, as it was before SIGTERM. */
  readonly tree: ReadonlyArray<ProcessInfo>
  /** The pid in the state lock before SIGTERM. */
  readonly lockHolder: number
  readonly exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null }
  /** Processes of `tree` still running once the started process has exited ("pid cmdline"). */
  readonly survivors: ReadonlyArray<string>
  readonly lockReleased: boolean
  readonly output: string
}

export const startThenSigterm = async (options: {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Record<string, string>
  readonly stateDir: string
}): Promise<Stopped> => {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exit = new Promise<Stopped["exit"]>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  const lock = Path.join(options.stateDir, "dlsync.lock")
  const holder = () => (Fs.existsSync(lock) ? Number(Fs.readFileSync(lock, "utf8").split("\n")[0]) : undefined)
  const pid = child.pid ?? 0
  let tree: Array<ProcessInfo> = []
  try {
    await waitUntil(() => /pass: .* downloaded/.test(output) && holder() !== undefined, 90_000, `a pass\n${output}`)
    tree = [processInfo(pid), ...descendants(pid)].filter((p) => p !== undefined)
    const lockHolder = holder() ?? 0
    child.kill("SIGTERM")
    const exited = await exit
    const survivors = tree.filter(isRunning)
    return {
      tree,
      lockHolder,
      exit: exited,
      survivors: survivors.map((p) => `${p.pid} ${p.cmdline}`),
      lockReleased: !Fs.existsSync(lock),
      output
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    for (const p of tree.filter(isRunning)) process.kill(p.pid, "SIGKILL")
  }
}

/** What /proc says of `pid`; undefined once it is gone or a zombie. */
const processInfo = (pid: number): ProcessInfo | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] === "Z") return undefined
    return {
      pid,
      ppid: Number(fields[1]),
      start: fields[19] ?? "",
      exe: Fs.realpathSync(`/proc/${pid}/exe`),
      cmdline: Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
    }
  } catch {
    return undefined
  }
}

/** Every process below `root`, however deep. */
const descendants = (root: number): Array<ProcessInfo> => {
  const all = Fs.readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => processInfo(Number(name)))
    .filter((p) => p !== undefined)
  const found: Array<ProcessInfo> = []
  let parents = new Set([root])
  while (parents.size > 0) {
    const children = all.filter((p) => parents.has(p.ppid))
    found.push(...children)
    parents = new Set(children.map((p) => p.pid))
  }
  return found
}

const isRunning = (p: ProcessInfo) => processInfo(p.pid)?.start === p.start
