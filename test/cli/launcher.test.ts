/**
 * bin/dlsync.js chooses what to run: the bundle while it is newer than every source and the
 * lock file, the sources otherwise (an edited source never runs stale). Each case is a copy
 * of the launcher in a scratch tree whose `src/main.ts` and `dist/dlsync.mjs` say who ran.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { type Sandbox, sandbox, waitUntil } from "../integration/harness.ts"

const launcher = Path.resolve(import.meta.dirname, "../../bin/dlsync.js")
let tree = ""

const write = (rel: string, text: string, mtimeSeconds: number) => {
  const path = Path.join(tree, rel)
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.writeFileSync(path, text)
  Fs.utimesSync(path, mtimeSeconds, mtimeSeconds)
}

const whoRuns = () => execFileSync(process.execPath, [Path.join(tree, "bin", "dlsync.js")], { encoding: "utf8" }).trim()

beforeEach(() => {
  tree = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-launcher-"))
  Fs.mkdirSync(Path.join(tree, "bin"))
  Fs.copyFileSync(launcher, Path.join(tree, "bin", "dlsync.js"))
  write("src/main.ts", 'console.log("sources")\n', 1_000)
  write("src/deep/module.ts", "export {}\n", 1_000)
  write("package-lock.json", "{}\n", 1_000)
})

afterEach(() => Fs.rmSync(tree, { recursive: true, force: true }))

describe("bin/dlsync.js", () => {
  it("runs the sources when there is no bundle", () => {
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the bundle when it is newer than every source and the lock file", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    assert.strictEqual(whoRuns(), "bundle")
  })

  it("runs the sources when any source, however deep, is newer than the bundle", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("src/deep/module.ts", "export const edited = 1\n", 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the sources when the dependencies changed after the bundle was built", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("package-lock.json", '{"changed":true}\n', 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the bundle where no sources ship (the container image)", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    Fs.rmSync(Path.join(tree, "src"), { recursive: true })
    Fs.rmSync(Path.join(tree, "package-lock.json"))
    assert.strictEqual(whoRuns(), "bundle")
  })
})

/**
 * SIGTERM to the process that the README's command lines start stops dlsync: no dlsync
 * process survives it (the whole tree under that process, read from /proc), the state
 * lock is released and the exit is clean. Each runs against the emulator with PATH as a
 * user's shell has it: the system Node (20 on a fresh machine, so the launcher switches to
 * node_modules/node) instead of the Node 24 of node_modules/.bin that runs these tests.
 */
describe("SIGTERM to the started process stops dlsync", { timeout: 120_000 }, () => {
  const repo = Path.resolve(import.meta.dirname, "../..")
  const userPath = (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => !dir.includes(Path.join("node_modules", ".bin")))
    .join(":")
  const systemNodeMajor = Number(
    execFileSync("node", ["-p", "process.versions.node.split('.')[0]"], {
      env: { PATH: userPath },
      encoding: "utf8"
    })
  )
  let box: Sandbox | undefined
  let started: ChildProcess | undefined
  let tree: Array<ProcessInfo> = []

  afterEach(async () => {
    if (started?.exitCode === null && started.signalCode === null) started.kill("SIGKILL")
    // A failed case must not leave its orphans running.
    for (const p of tree.filter(isRunning)) process.kill(p.pid, "SIGKILL")
    tree = []
    await box?.close()
    box = undefined
  })

  /** Starts `command` as a user's shell would, signals it once dlsync has run a pass, and checks what is left. */
  const stopsCleanly = async (command: string, args: ReadonlyArray<string>, extra: Record<string, string> = {}) => {
    box = await sandbox()
    const env = box.env({ PATH: userPath, ...extra })
    // Not the npm settings of the `npm test` or `npx vitest` that runs this file.
    for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === "INIT_CWD") delete env[key]
    const child = spawn(command, args, { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] })
    started = child
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal }))
    )
    const lock = Path.join(box.stateDir, "dlsync.lock")
    const holder = () => (Fs.existsSync(lock) ? Number(Fs.readFileSync(lock, "utf8").split("\n")[0]) : undefined)
    const pid = child.pid ?? 0
    await waitUntil(() => output.includes("pass: downloaded") && holder() !== undefined, 90_000, `a pass\n${output}`)

    tree = [processInfo(pid), ...descendants(pid)].filter((p) => p !== undefined)
    assert.include(
      tree.map((p) => p.pid),
      holder(),
      "the lock holder runs under the started process"
    )
    if (systemNodeMajor < 24) {
      // The system Node started the command; dlsync itself runs on node_modules/node.
      assert.notStrictEqual(Fs.readlinkSync(`/proc/${pid}/exe`), Fs.realpathSync(bundledNode))
      assert.isTrue(tree.some((p) => Fs.readlinkSync(`/proc/${p.pid}/exe`) === Fs.realpathSync(bundledNode)))
    }

    child.kill("SIGTERM")
    assert.deepStrictEqual(await exit, { code: 0, signal: null }, output)
    assert.deepStrictEqual(
      tree.filter(isRunning).map((p) => `${p.pid} ${p.cmdline}`),
      [],
      "no process of the started tree survives"
    )
    assert.isFalse(Fs.existsSync(lock), "the state lock is released")
  }

  it("`dlsync run`, with `dlsync` on PATH as `npm link` puts it", async () => {
    // npm link's layout: <prefix>/bin/dlsync -> ../lib/node_modules/dlsync/bin/dlsync.js,
    // <prefix>/lib/node_modules/dlsync -> the checkout. Made by hand: `npm link` would
    // also rebuild dist/ under the other tests running now.
    const prefix = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-link-"))
    try {
      Fs.mkdirSync(Path.join(prefix, "bin"))
      Fs.mkdirSync(Path.join(prefix, "lib", "node_modules"), { recursive: true })
      Fs.symlinkSync(repo, Path.join(prefix, "lib", "node_modules", "dlsync"))
      Fs.symlinkSync("../lib/node_modules/dlsync/bin/dlsync.js", Path.join(prefix, "bin", "dlsync"))
      await stopsCleanly("dlsync", ["run"], { PATH: `${Path.join(prefix, "bin")}:${userPath}` })
    } finally {
      Fs.rmSync(prefix, { recursive: true, force: true })
    }
  })

  it("`/path/to/dlsync/bin/dlsync.js run`, the launcher by its path as the systemd units run it", async () => {
    await stopsCleanly(Path.join(repo, "bin", "dlsync.js"), ["run"])
  })

  it("`npx dlsync run` in the checkout (npm forwards SIGTERM to dlsync itself)", async () => {
    // The user's own npm cache, as for any npx.
    await stopsCleanly("npx", ["dlsync", "run"], { HOME: Os.homedir() })
  })
})

const bundledNode = Path.resolve(import.meta.dirname, "../../node_modules/node/bin/node")

interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  /** Start time in clock ticks since boot: tells a process from a later one with its pid. */
  readonly start: string
  readonly cmdline: string
}

/** What /proc says of `pid`, undefined once it is gone or a zombie. */
const processInfo = (pid: number): ProcessInfo | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (fields[0] === "Z") return undefined
    const cmdline = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
    return { pid, ppid: Number(fields[1]), start: fields[19] ?? "", cmdline }
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
