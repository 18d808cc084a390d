/**
 * The integration harness: an emulator started in this process (port 0, control on), the
 * real CLI spawned as a child process against it (configuration through DLSYNC_* variables,
 * a temp root and state dir), and snapshots of a directory tree to compare.
 *
 * Waits are on conditions with a deadline, never on fixed sleeps.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"
import { localhostTls } from "../transfer/support/testTls.ts"

export const CLI = Path.resolve(import.meta.dirname, "../../bin/dlsync.js")

/** The tests' cache folder (the launcher keeps Node's compile cache there), in the checkout's own node_modules. */
const TEST_CACHE = Path.resolve(import.meta.dirname, "../../node_modules/.cache/dlsync-tests")
Fs.mkdirSync(TEST_CACHE, { recursive: true, mode: 0o700 })

export interface Sandbox {
  readonly emu: RunningEmulator
  readonly dir: string
  readonly root: string
  readonly stateDir: string
  /** The CLI's environment: OAuth access token unless `apiKey`. */
  env(overrides?: Record<string, string>, options?: { readonly apiKey?: boolean }): Record<string, string>
  run(args: ReadonlyArray<string>, options?: RunOptions): Promise<CliResult>
  spawn(args: ReadonlyArray<string>, options?: RunOptions): Spawned
  close(): Promise<void>
}

export interface RunOptions {
  readonly env?: Record<string, string>
  readonly apiKey?: boolean
  readonly root?: string
  readonly stateDir?: string
  /** Kill the process (SIGKILL) and fail after this long. Default 30 s. */
  readonly deadlineMs?: number
}

export interface CliResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Spawned {
  readonly child: ChildProcess
  readonly output: () => { readonly stdout: string; readonly stderr: string }
  readonly exit: Promise<CliResult>
}

/** Where the emulator's CDN serves: plain HTTP, or https with the committed test certificate. */
export type CdnScheme = "http" | "https"

/** The CDN schemes the transfer tests run over. */
export const CDN_SCHEMES: ReadonlyArray<CdnScheme> = ["http", "https"]

/**
 * A fresh emulator (library `empty` unless given) and temp folders. With `cdn: "https"` its
 * CDN speaks TLS with test/fixtures/tls/localhost.crt, which the CLI trusts through
 * NODE_EXTRA_CA_CERTS (as a user trusts a private CA); `env({ NODE_EXTRA_CA_CERTS: "" })`
 * takes that trust away. `api: "https"` does the same for the API origin.
 */
export const sandbox = async (
  library = "empty",
  options: { readonly cdn?: CdnScheme; readonly api?: CdnScheme } = {}
): Promise<Sandbox> => {
  const tls = { key: localhostTls.key, cert: localhostTls.cert }
  const emu = await startEmulator({
    library,
    control: true,
    ...(options.cdn === "https" ? { cdnTls: tls } : {}),
    ...(options.api === "https" ? { apiTls: tls } : {})
  })
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-it-"))
  const root = Path.join(dir, "root")
  const stateDir = Path.join(dir, "state")
  // dlsync refuses a missing root (it may be an unmounted disk): the user creates it.
  Fs.mkdirSync(root)
  const env = (overrides: Record<string, string> = {}, options: { readonly apiKey?: boolean } = {}) =>
    cliEnv(emu, dir, root, stateDir, overrides, options.apiKey ?? false)
  const withDirs = (options: RunOptions) =>
    env(
      {
        ...(options.root === undefined ? {} : { DLSYNC_MIRROR_ROOT: options.root }),
        ...(options.stateDir === undefined ? {} : { DLSYNC_MIRROR_STATE_DIR: options.stateDir }),
        ...options.env
      },
      { apiKey: options.apiKey ?? false }
    )
  return {
    emu,
    dir,
    root,
    stateDir,
    env,
    run: (args, options = {}) => runCli(args, withDirs(options), options.deadlineMs ?? 30_000),
    spawn: (args, options = {}) => spawnCli(args, withDirs(options), options.deadlineMs ?? 30_000),
    close: async () => {
      await emu.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

export const cliEnv = (
  emu: RunningEmulator,
  home: string,
  root: string,
  stateDir: string,
  overrides: Record<string, string>,
  apiKey: boolean
): Record<string, string> => {
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("DLSYNC_")) base[k] = v
  }
  return {
    ...base,
    HOME: home,
    XDG_CONFIG_HOME: Path.join(home, "config"),
    // One V8 code cache for every dlsync the tests start (each sandbox's HOME is new).
    XDG_CACHE_HOME: TEST_CACHE,
    NO_COLOR: "1",
    DLSYNC_SERVICE_BASE_URL: emu.baseUrl,
    DLSYNC_SERVICE_API_KEY: apiKey ? emu.apiKey : emu.accessToken,
    DLSYNC_MIRROR_ROOT: root,
    DLSYNC_MIRROR_STATE_DIR: stateDir,
    DLSYNC_TRANSFERS_MIN_FREE_SPACE: "0",
    ...(emu.cdnOrigin.startsWith("https:") || emu.baseUrl.startsWith("https:")
      ? { NODE_EXTRA_CA_CERTS: localhostTls.certPath }
      : {}),
    // Daemons of parallel test files must not race for the default 127.0.0.1:7660.
    DLSYNC_SERVER_LISTEN: "off",
    ...overrides
  }
}

export const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string>, deadlineMs: number): Spawned => {
  // Started as a program, as systemd and `dlsync` on PATH start it: its shell lines start
  // Node once with dlsync's settings (`node bin/dlsync.js` starts it twice).
  const child = spawn(CLI, args, { env, stdio: ["ignore", "pipe", "pipe"] })
  const started = Date.now()
  // Which signals the test sent, and when: a deadline then tells a process that did not stop
  // from a test that never asked it to.
  const sent: Array<string> = []
  const kill = child.kill.bind(child)
  child.kill = (signal?: NodeJS.Signals | number) => {
    sent.push(`${String(signal ?? "SIGTERM")} at +${((Date.now() - started) / 1000).toFixed(1)} s`)
    return kill(signal)
  }
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString()
  })
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString()
  })
  const exit = new Promise<CliResult>((resolve, reject) => {
    // A test process that was itself held up (a loaded CI machine) runs its timers before the
    // I/O that waited meanwhile: setImmediate lets an exit already queued be seen first.
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (child.exitCode !== null || child.signalCode !== null) return
          const signals = sent.length === 0 ? "no signal sent" : `sent ${sent.join(", ")}`
          const threads = child.pid === undefined ? "" : threadStates(child.pid)
          kill("SIGKILL")
          reject(
            new Error(
              `dlsync ${args.join(" ")} did not finish within ${deadlineMs} ms (${signals})\n${threads}\n${stdout}\n${stderr}`
            )
          )
        }),
      deadlineMs
    )
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, output: () => ({ stdout, stderr }), exit }
}

/**
 * What each thread of a process that missed its deadline is doing, from /proc (Linux): its
 * name, state (R running, S sleeping, D waiting on the disk, Z exited), the kernel function
 * it waits in, and its kernel stack where readable. A process stuck in its exit waits in
 * threads joined at exit (libuv's pool, V8's workers); one stuck in a pass waits elsewhere.
 */
const threadStates = (pid: number): string => {
  const read = (path: string) => {
    try {
      return Fs.readFileSync(path, "utf8").trim()
    } catch {
      return "?"
    }
  }
  let tids: Array<string>
  try {
    tids = Fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return `threads of ${pid}: /proc not readable`
  }
  const lines = tids.map((tid) => {
    const dir = `/proc/${pid}/task/${tid}`
    const state = read(`${dir}/stat`)
      .replace(/^.*\) /, "")
      .split(" ")[0]
    const stack = read(`${dir}/stack`).split("\n").slice(0, 4).join(" < ")
    return `  ${tid} ${read(`${dir}/comm`)} ${state} wchan=${read(`${dir}/wchan`)} syscall=${read(`${dir}/syscall`).split(" ")[0]} ${stack}`
  })
  return `threads of ${pid} at the deadline:\n${lines.join("\n")}`
}

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>, deadlineMs: number) =>
  spawnCli(args, env, deadlineMs).exit

/** Polls `condition` until it holds; throws after `deadlineMs`. */
export const waitUntil = async (condition: () => boolean, deadlineMs = 15_000, what = "condition"): Promise<void> => {
  const end = Date.now() + deadlineMs
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

export interface TreeEntry {
  readonly type: "file" | "folder"
  readonly size: number
}

/** Every file and folder below `root` (not `.dlsync`), by relative path. */
export const snapshot = (root: string): Record<string, TreeEntry> => {
  const out: Record<string, TreeEntry> = {}
  const walk = (rel: string) => {
    for (const name of Fs.readdirSync(Path.join(root, rel)).sort()) {
      const path = rel === "" ? name : `${rel}/${name}`
      if (path === ".dlsync") continue
      const stat = Fs.lstatSync(Path.join(root, path))
      if (stat.isDirectory()) {
        out[path] = { type: "folder", size: 0 }
        walk(path)
      } else out[path] = { type: "file", size: stat.size }
    }
  }
  if (Fs.existsSync(root)) walk("")
  return out
}

/**
 * The tree the remote account should produce (plain names only: fixtures avoid names that
 * need sanitizing), with every file's bytes checked against the emulator's content.
 */
export const expectedTree = (emu: RunningEmulator): Record<string, TreeEntry> => {
  const tree = emu.state.primaryUser.tree
  const out: Record<string, TreeEntry> = {}
  for (const item of tree.values()) {
    const path = tree.pathOf(item.id).join("/")
    out[path] = { type: item.type, size: item.type === "file" ? item.sizeBytes : 0 }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** Paths of files whose bytes differ from the emulator's content of the same item. */
export const contentMismatches = (emu: RunningEmulator, root: string): Array<string> => {
  const tree = emu.state.primaryUser.tree
  const bad: Array<string> = []
  for (const item of tree.values()) {
    if (item.type !== "file") continue
    const path = tree.pathOf(item.id).join("/")
    const abs = Path.join(root, path)
    if (!Fs.existsSync(abs)) {
      bad.push(`${path} (missing)`)
      continue
    }
    const want = Buffer.alloc(item.sizeBytes)
    fillContent(contentKey(item.id, item.contentVersion), 0, want)
    if (!Fs.readFileSync(abs).equals(want)) bad.push(path)
  }
  return bad
}

/** A small account: three folders, a dozen files of a few KiB. Returns the ids by path. */
export const seedSmallLibrary = (emu: RunningEmulator): Map<string, string> => {
  const ids = new Map<string, string>()
  const folder = (path: string, parent: string | null) => {
    const item = emu.control.addFolder({ name: Path.basename(path), parentId: parent })
    ids.set(path, item.id)
    return item.id
  }
  const file = (path: string, parent: string | null, size: number) => {
    const item = emu.control.addFile({ name: Path.basename(path), parentId: parent, sizeBytes: size })
    ids.set(path, item.id)
  }
  const movies = folder("Movies", null)
  const tv = folder("TV", null)
  const season = folder("TV/Season 1", tv)
  file("Movies/alpha.mkv", movies, 40_000)
  file("Movies/beta.mkv", movies, 20_000)
  file("Movies/beta.en.srt", movies, 900)
  file("TV/Season 1/e01.mkv", season, 30_000)
  file("TV/Season 1/e02.mkv", season, 31_000)
  file("TV/notes.txt", tv, 120)
  file("readme.txt", null, 64)
  return ids
}

/** Adds `count` small files in one folder, for multi-page listings; returns the folder id. */
export const seedMany = (emu: RunningEmulator, folderName: string, count: number, size = 64): string => {
  const folder = emu.control.addFolder({ name: folderName, parentId: null })
  for (let i = 0; i < count; i++) {
    emu.control.addFile({ name: `file-${String(i).padStart(4, "0")}.txt`, parentId: folder.id, sizeBytes: size })
  }
  return folder.id
}

/** A loopback port that was free a moment ago, for a daemon's health server. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = address !== null && typeof address === "object" ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Polls an async condition until it holds (bounded). */
export const eventually = async (
  condition: () => Promise<boolean>,
  what: string,
  deadlineMs = 30_000,
  context: () => string = () => ""
) => {
  const end = Date.now() + deadlineMs
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${context()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
