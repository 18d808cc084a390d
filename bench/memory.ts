/**
 * `node bench/memory.ts` (also `npm run bench -- --only memory`): what the daemon holds in
 * memory, measured from outside (/proc/PID/status VmRSS and VmHWM) on the real `dlsync run`
 * process, launched as users run it (bin/dlsync.js running the bundle), against
 * `dlsync emulator --control` in its own process.
 *
 *   node bench/memory.ts [--files 2000] [--churn-minutes 3] [--requests 10000] [--idle 10000]
 *
 * 1. The daemon's first pass over an empty account; then idle (`idle`).
 * 2. The HTTP server (/healthz, /readyz, /metrics, /api/status): 3 rounds of `--requests`
 *    keep-alive requests, then `--idle` connections that send nothing, opened, held and
 *    closed, each from another process (support/httpLoad.ts); then quiet (`recovered`).
 * 3. `--files` small files added to the account and mirrored (`after mirroring`).
 * 4. Churn: the account changes twice a second (a rename, or a file added) for
 *    `--churn-minutes`, the daemon told to poll every second (SIGUSR1); RSS sampled as a
 *    series. Otherwise the daemon runs with its defaults (a poll a minute).
 *
 * Goals (issue 16): idle ≤ 80 MB; under churn ≤ 150 MB and flat; the server back within
 * 10 % of its idle figure after the load. See bench/README.md.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { emulatorJson, freePort, installCli, table } from "./support/tools.ts"

const { values: args } = parseArgs({
  options: {
    files: { type: "string", default: "2000" },
    "churn-minutes": { type: "string", default: "3" },
    requests: { type: "string", default: "10000" },
    idle: { type: "string", default: "10000" },
    verbose: { type: "boolean", default: false },
    /** Diagnostics: Node flags for the daemon's process, e.g. "--trace-gc". */
    "node-flags": { type: "string", default: "" },
    dir: { type: "string", default: "/tmp/dlsync-bench-memory" }
  },
  // npm run bench -- --only memory passes bench/run.ts's options through.
  strict: false
})
const FILES = Number(args.files)
const CHURN_MS = Number(args["churn-minutes"]) * 60_000
const REQUESTS = Number(args.requests)
const IDLE_CONNECTIONS = Number(args.idle)
const FILE_SIZE = 4096
const DIR = String(args.dir)
const NODE = process.execPath
const LOAD = Path.join(import.meta.dirname, "support", "httpLoad.ts")
/** How long the daemon is left alone before an "idle" figure is read. */
const SETTLE_MS = 15_000

interface Rss {
  readonly rssMB: number
  readonly hwmMB: number
  /** Of the RSS: the process's own memory (heaps, stacks) and pages of files (the node binary's code). */
  readonly anonMB: number
  readonly fileMB: number
}

/** The process's resident set now and its peak so far, from outside. */
const rssOf = (pid: number): Rss => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (key: string) =>
    Number(/^(\w+):\s+(\d+)/m.exec(status.split("\n").find((l) => l.startsWith(key)) ?? "")?.[2])
  return {
    rssMB: kb("VmRSS:") / 1024,
    hwmMB: kb("VmHWM:") / 1024,
    anonMB: kb("RssAnon:") / 1024,
    fileMB: (kb("RssFile:") + kb("RssShmem:")) / 1024
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const log = (line: string) => process.stderr.write(`  ${line}\n`)

export const main = async () => {
  Fs.rmSync(DIR, { recursive: true, force: true })
  const root = Path.join(DIR, "root")
  const stateDir = Path.join(DIR, "state")
  Fs.mkdirSync(root, { recursive: true })
  const cli = await installCli(Path.join(DIR, "cli"))
  const emulator = await startEmulator(cli)
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const daemon = ChildProcess.spawn(
    NODE,
    [
      ...String(args["node-flags"])
        .split(" ")
        .filter((f) => f !== ""),
      cli,
      "run"
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        ...(process.env.MALLOC_ARENA_MAX === undefined ? {} : { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX }),
        HOME: DIR,
        XDG_CONFIG_HOME: Path.join(DIR, "config"),
        NO_COLOR: "1",
        DLSYNC_SERVICE_BASE_URL: emulator.info.base_url,
        DLSYNC_SERVICE_API_KEY: emulator.info.access_token,
        DLSYNC_MIRROR_ROOT: root,
        DLSYNC_MIRROR_STATE_DIR: stateDir,
        DLSYNC_TRANSFERS_MIN_FREE_SPACE: "0",
        DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}`,
        DLSYNC_LOG_LEVEL: args.verbose === true ? "info" : "warn"
      },
      stdio: ["ignore", "inherit", "inherit"]
    }
  )
  const pid = daemon.pid ?? 0
  const rows: Array<[string, Rss, string]> = []
  const record = (what: string, goal = "") => {
    const r = rssOf(pid)
    rows.push([what, r, goal])
    log(
      `${what}: ${r.rssMB.toFixed(0)} MB (peak ${r.hwmMB.toFixed(0)}; anonymous ${r.anonMB.toFixed(1)}, file pages ${r.fileMB.toFixed(1)})`
    )
    return r
  }
  try {
    console.log(`dlsync memory benchmark — ${new Date().toISOString()} — RSS of the \`dlsync run\` process`)
    console.log("A shared 2-core machine: RSS is barely affected by other work, timings are.\n")
    await waitFor(async () => (await get(`${origin}/readyz`)) === 200, 60_000, "the daemon to be ready")
    await sleep(SETTLE_MS)
    const idle = record("idle after the first pass (empty account)", "≤ 80 MB")

    // --- the HTTP server ---
    for (let round = 1; round <= 3; round++) {
      const r = load(["requests", origin, String(REQUESTS), "50"])
      if (r.failed !== 0 || r.ok !== REQUESTS) throw new Error(`HTTP round ${round}: ${JSON.stringify(r)}`)
      record(`after HTTP round ${round} (${REQUESTS} requests, ${Number(r.seconds).toFixed(1)} s)`)
    }
    const held = load(["idle", origin, String(IDLE_CONNECTIONS), "12000"])
    record(`after ${held.opened} idle connections (${held.refused} refused, ${held.closedByServer} closed by it)`)
    await sleep(SETTLE_MS)
    const recovered = record("server recovered (15 s quiet)", `≤ ${(idle.rssMB * 1.1).toFixed(0)} MB (idle + 10 %)`)

    // --- mirroring, then churn ---
    const ids = await addFiles(emulator.controlUrl, FILES)
    daemon.kill("SIGUSR1")
    await waitFor(async () => countFiles(root) >= FILES, 600_000, `${FILES} files to be mirrored`)
    await sleep(SETTLE_MS)
    const mirrored = record(`after mirroring ${FILES} files`)

    const series: Array<number> = []
    const t0 = performance.now()
    let changes = 0
    let nextSample = 0
    while (performance.now() - t0 < CHURN_MS) {
      const tick = performance.now()
      await churn(emulator.controlUrl, ids, changes++)
      if (changes % 2 === 0) daemon.kill("SIGUSR1")
      if (tick - t0 >= nextSample) {
        series.push(rssOf(pid).rssMB)
        nextSample += 15_000
      }
      await sleep(Math.max(0, 500 - (performance.now() - tick)))
    }
    const churned = record(`after ${(CHURN_MS / 60_000).toFixed(1)} min of churn (${changes} changes)`, "≤ 150 MB")
    await sleep(SETTLE_MS)
    const quiet = record("after churn, 15 s quiet")

    console.log("")
    table(
      ["measure", "RSS MB", "peak MB", "goal"],
      rows.map(([what, r, goal]) => [what, r.rssMB.toFixed(0), r.hwmMB.toFixed(0), goal])
    )
    const first = series.slice(0, Math.ceil(series.length / 2))
    const second = series.slice(Math.ceil(series.length / 2))
    const avg = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
    console.log(`\nRSS under churn, every 15 s (MB): ${series.map((x) => x.toFixed(0)).join(" ")}`)
    console.log(
      `growth from the first half to the second: ${(avg(second) - avg(first)).toFixed(1)} MB (mirrored ${mirrored.rssMB.toFixed(0)} → quiet ${quiet.rssMB.toFixed(0)} MB)`
    )
    console.log("\nGoals")
    table(
      ["goal", "figure", "met"],
      [
        ["daemon idle ≤ 80 MB", `${idle.rssMB.toFixed(0)} MB`, yes(idle.rssMB <= 80)],
        [
          "under churn ≤ 150 MB",
          `${Math.max(...series, churned.rssMB).toFixed(0)} MB (max)`,
          yes(Math.max(...series, churned.rssMB) <= 150)
        ],
        [
          "churn flat (2nd half − 1st half ≤ 5 MB)",
          `${(avg(second) - avg(first)).toFixed(1)} MB`,
          yes(avg(second) - avg(first) <= 5)
        ],
        [
          "server back within 10 % of idle",
          `${recovered.rssMB.toFixed(0)} / ${idle.rssMB.toFixed(0)} MB (${((recovered.rssMB / idle.rssMB - 1) * 100).toFixed(0)} %)`,
          yes(recovered.rssMB <= idle.rssMB * 1.1)
        ]
      ]
    )
  } finally {
    daemon.kill("SIGTERM")
    emulator.child.kill("SIGTERM")
  }
}

/**
 * The CLI as `npm ci` installs it: the launcher (bin/dlsync.js, which sets dlsync's V8 flags)
 * beside the bundle it runs (dist/dlsync.mjs, scripts/build.ts) and a link to node_modules
 * (the external better-sqlite3). No sources beside it, so the launcher takes the bundle.
 */
const yes = (ok: boolean) => (ok ? "yes" : "NO")

/** One change to the account: a rename of one of the files, or every fourth change a new file. */
const churn = async (controlUrl: string, ids: Array<string>, n: number) => {
  if (n % 4 === 3) {
    ids.push(await addFile(controlUrl, `churn-${n}.bin`, null))
    return
  }
  const id = ids[(n * 7919) % ids.length] ?? ""
  await control(`${controlUrl}/files/${id}/rename`, { name: `renamed-${n}.bin` }, 200)
}

const addFiles = async (controlUrl: string, count: number): Promise<Array<string>> => {
  const ids: Array<string> = []
  const folders: Array<string> = []
  for (let f = 0; f < 20; f++) folders.push(await addFile(controlUrl, `folder-${f}`, null, "folder"))
  for (let i = 0; i < count; i++)
    ids.push(await addFile(controlUrl, `file-${i}.bin`, folders[i % folders.length] ?? null))
  return ids
}

const addFile = async (controlUrl: string, name: string, parentId: string | null, type = "file"): Promise<string> => {
  const body = await control(
    `${controlUrl}/files`,
    { type, name, parent_id: parentId, ...(type === "file" ? { size_bytes: FILE_SIZE } : {}) },
    201
  )
  return (body as { data: { id: string } }).data.id
}

const control = async (url: string, body: unknown, expect: number): Promise<unknown> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (res.status !== expect) throw new Error(`emulator: ${url}: ${res.status} ${await res.text()}`)
  return res.json()
}

const get = async (url: string): Promise<number> => {
  try {
    const res = await fetch(url)
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0
  }
}

const countFiles = (root: string): number =>
  Fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && !e.parentPath.includes(".dlsync")
  ).length

const waitFor = async (condition: () => Promise<boolean>, deadlineMs: number, what: string) => {
  const end = performance.now() + deadlineMs
  while (!(await condition())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}

/** Runs the load process (support/httpLoad.ts) to its end and returns its JSON line. */
const load = (argv: ReadonlyArray<string>): Record<string, number> =>
  JSON.parse(
    ChildProcess.execFileSync(NODE, [LOAD, ...argv], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
      .trim()
      .split("\n")
      .pop() ?? "{}"
  )

interface EmulatorInfo {
  readonly base_url: string
  readonly access_token: string
  readonly control_url: string
}

/** `dlsync emulator --json --control --library empty` in its own process (the same bundle). */
const startEmulator = async (cli: string) => {
  const child = ChildProcess.spawn(
    NODE,
    [cli, "emulator", "--port", "0", "--json", "--control", "--library", "empty"],
    {
      stdio: ["ignore", "pipe", "inherit"]
    }
  )
  const info = await emulatorJson<EmulatorInfo>(child)
  return { child, info, controlUrl: info.control_url }
}

if (import.meta.main) await main()
