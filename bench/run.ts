/**
 * `npm run bench` — what users get: the whole `dlsync run --once` process against curl,
 * aria2c and rclone, side by side in one run, all reading the same bytes from one nginx on
 * loopback, over https by default (a certificate made at setup) or plain http (`--http`).
 *
 *   node bench/run.ts [--runs 5] [--warmup 1] [--only big|capped|small|zip|resume|memory] [--http]
 *                     [--size-mib 2048] [--small 2000] [--profile DIR] [--split-links] [--verbose]
 *                     [--dlsync-node-flags=--max-opt=2] [--dlsync-env=NAME=VALUE] [--rows REGEX]
 *                     [--dir /tmp/dlsync-bench]
 *
 * The big and capped rows time whole processes from outside (wall, user+system CPU, peak
 * RSS): dlsync as installed by `npm ci` (bin/dlsync.js beside the bundle) running
 * `run --once` against its own service emulator (in its own process), whose links point at
 * nginx (`--cdn-base`), and each peer alike; durable rows end with `sync FILE`, as dlsync
 * fsyncs what it lands. The small-file and resume rows still drive the engine inside a
 * bundled runner (support/dlsyncRun.ts, module loading excluded), labelled as such: they
 * compare with a plain-Node floor, and the resume row kills the runner at 50 %.
 * Diagnostics (runner rows): `--profile DIR` writes a V8 CPU profile per run into DIR;
 * `--split-links` asks for every link first and reports that phase apart; `--verbose`
 * prints the runner's own output. `--dlsync-node-flags FLAGS` (big and capped) adds a row of
 * the same dlsync process given these Node flags (after the launcher's own, so they win),
 * run in the same rounds, and its wall and CPU ratios to the plain row, pair by pair (that row
 * starts as `node FLAGS bin/dlsync.js`, the plain one as a program: include
 * --max-semi-space-size=1 so that both start Node once);
 * `--dlsync-env NAME=VALUE` (e.g. a glibc malloc setting, which the launcher then keeps) does
 * the same with a variable in that row's environment. `--rows REGEX` runs only the rows whose
 * names match (e.g. `--rows dlsync` for more rounds of an A/B in the same time; the goal
 * rows that need a row left out then mean nothing).
 * Rounds alternate the tools (A B A B …) so page-cache drift hits all alike, after
 * `--warmup` rounds whose figures are dropped: the first writes of 2 GiB after setup cost this
 * VM seconds more (its host lends memory back), and the tool that runs first would pay them
 * alone (dlsync's first round: 0.8–1.9 s over its median in three big runs, 4.6 s in a capped
 * one); each figure is the median of the rounds with min–max, and each ratio is computed pair
 * by pair within a round. Data lives under /tmp/dlsync-bench (generated once, reused; `--dir`
 * for another, e.g. for two runs at once on one machine). See bench/README.md.
 * `--only memory` (also part of a full run, last) is bench/memory.ts: the daemon's RSS.
 * `--only zip` times whole `run --once` processes on 2,000 × 64 KiB in one folder (the ZIP
 * path, issue 38) against rclone, and with 50 ms of latency on every API request against
 * dlsync's own per-file path; the archives come through nginx, which forwards them to the
 * emulator that builds them. `--only zip --hold` sets it up, writes the environment of one
 * dlsync run to `<dir>/zip.env` and `<dir>/zip-latency.env`, and waits for Ctrl-C: a process
 * run by hand there (e.g. under `--cpu-prof`) meets the same account, emulator and nginx.
 */
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import type { DlsyncJob } from "./support/dlsyncRun.ts"
import {
  BenchSetupError,
  bundleRunner,
  emulatorJson,
  ensureTools,
  fmt,
  freePort,
  installCli,
  type Measured,
  makeCertificate,
  measure,
  processCpuSeconds,
  type Stats,
  startNginx,
  stats,
  syncDisks,
  table,
  which
} from "./support/tools.ts"

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    only: { type: "string" },
    http: { type: "boolean", default: false },
    "size-mib": { type: "string", default: "2048" },
    small: { type: "string", default: "2000" },
    profile: { type: "string" },
    "split-links": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    "dlsync-node-flags": { type: "string" },
    "dlsync-env": { type: "string" },
    rows: { type: "string" },
    hold: { type: "boolean", default: false },
    dir: { type: "string", default: "/tmp/dlsync-bench" }
  }
})
const RUNS = Math.max(1, Number(args.runs))
const WARMUP = Math.max(0, Number(args.warmup))
const BIG = Number(args["size-mib"]) * 1024 * 1024
const SMALL_COUNT = Number(args.small)
const SMALL_SIZE = 64 * 1024
const HTTPS = args.http !== true
const SCHEME = HTTPS ? "https" : "http"
/** What many debrid CDNs allow each connection (nginx limit_rate, bytes per second). */
const CAPPED_RATE = "25m"
const DIR = Path.resolve(args.dir)
const WWW = Path.join(DIR, "www")
/** `<emulator tag>/<file id>` → the file in www: what nginx serves at each emulator's link paths. */
const IDS = Path.join(DIR, "ids")
const OUT = Path.join(DIR, "out")
const STATE = Path.join(DIR, "state")
const NODE = process.execPath
/** dlsync's runner, bundled as the CLI ships (bundleRunner in support/tools.ts), once per bench run. */
const RUNNER = Path.join(DIR, "runner", "dlsyncRun.mjs")
/** `--dlsync-node-flags`: Node flags for an extra dlsync row (none: no such row). */
const NODE_FLAGS = (args["dlsync-node-flags"] ?? "").split(" ").filter((f) => f !== "")
/** `--dlsync-env`: one variable for that row (none: no such row unless there are flags). */
const EXTRA_ENV: Record<string, string> =
  args["dlsync-env"] === undefined
    ? {}
    : { [args["dlsync-env"].split("=")[0] ?? ""]: args["dlsync-env"].split("=").slice(1).join("=") }
const FLAGGED = NODE_FLAGS.length > 0 || args["dlsync-env"] !== undefined
const SECTIONS = ["big", "capped", "small", "zip", "resume", "memory"]
/** The API latency of the zip section's second account (ms on every API request). */
const ZIP_LATENCY_MS = 50

const main = async () => {
  if (args.only !== undefined && !SECTIONS.includes(args.only)) {
    throw new BenchSetupError(`--only ${args.only}: expected one of ${SECTIONS.join(", ")}`)
  }
  if (args.only === "memory") return memory()
  const wanted = (section: string) => args.only === undefined || args.only === section
  ensureTools()
  prepareData()
  Fs.rmSync(IDS, { recursive: true, force: true })
  const tls = HTTPS ? makeCertificate(DIR) : undefined
  /** Every Node child trusts the certificate the way a user's dlsync would. */
  const env: NodeJS.ProcessEnv = { ...process.env, ...(tls === undefined ? {} : { NODE_EXTRA_CA_CERTS: tls.cert }) }
  const port = await freePort()
  const cappedPort = await freePort()
  // The zip section's emulators serve their archives on ports fixed now, for nginx to forward to.
  const zipCdn = wanted("zip") ? { plain: await freePort(), slow: await freePort() } : undefined
  const proxies =
    zipCdn === undefined
      ? []
      : [
          { path: "/e/z/zip/", port: zipCdn.plain, to: "/zip/" },
          { path: "/e/zl/zip/", port: zipCdn.slow, to: "/zip/" }
        ]
  const nginx = await startNginx({ dir: DIR, port, cappedPort, cappedRate: CAPPED_RATE, tls, proxies })
  const origin = `${SCHEME}://127.0.0.1:${port}`
  const cappedOrigin = `${SCHEME}://127.0.0.1:${cappedPort}`
  const emulators: Array<ChildProcess.ChildProcess> = []
  try {
    const cli = await installCli(Path.join(DIR, "cli"))
    /** An emulator of its own, stopped with the others at the end. */
    const account = async (tag: string, cdn: string, cdnPort?: number) => {
      const started = await startEmulator(cli, `${cdn}/e/${tag}`, Path.join(IDS, tag), env, cdnPort)
      emulators.push(started.child)
      return started
    }
    const emulator = async (tag: string, cdn: string, library: (controlUrl: string) => Promise<Library>) => {
      const started = await account(tag, cdn)
      return { ...started, ...(await library(started.controlUrl)), tag }
    }
    const peers: Peers = { cdn: origin, caCert: tls?.cert, env }
    console.log(
      `dlsync transfer benchmark — ${new Date().toISOString()} — ${SCHEME}, ${RUNS} rounds after ${WARMUP} warm-up, nproc ${navigatorCpus()}`
    )
    console.log("Absolute figures on a shared 2-core machine are noisy; the within-round ratios are what count.\n")
    if (wanted("big")) {
      const whole = await emulator("w", origin, (url) => addLibrary(url, "w", false))
      // An account with nothing in it: dlsync's start and one look at the account, alone.
      const empty = await account("n", origin)
      const stackFloorCli = await installCli(
        STACK_FLOOR_DIR,
        Path.join(import.meta.dirname, "support", "stackFloor.ts")
      )
      big(
        { ...peers, cli, api: whole.api },
        { ...peers, cli, api: empty.api },
        { ...peers, cli: stackFloorCli, api: empty.api }
      )
    }
    if (wanted("capped")) {
      const whole = await emulator("c", cappedOrigin, (url) => addLibrary(url, "c", false))
      capped({ ...peers, cdn: cappedOrigin, cli, api: whole.api })
    }
    if (zipCdn !== undefined) {
      const zipAccount = async (tag: string, cdnPort: number, latencyMs: number) => {
        const started = await account(tag, origin, cdnPort)
        await addLibrary(started.controlUrl, tag, true, false)
        await control(started.controlUrl, "PUT", "/zip", { base: `${origin}/e/${tag}` })
        if (latencyMs > 0) {
          await control(started.controlUrl, "POST", "/faults", {
            kind: "latency",
            path: "/api/**",
            probability: 1,
            delay_ms: latencyMs
          })
        }
        return { ...peers, cli, api: started.api, emulatorPid: started.child.pid ?? 0 }
      }
      const zipAccounts = [
        await zipAccount("z", zipCdn.plain, 0),
        await zipAccount("zl", zipCdn.slow, ZIP_LATENCY_MS)
      ] as const
      if (args.hold === true) await holdZip(...zipAccounts)
      else zipSection(...zipAccounts)
    }
    if (wanted("small") || wanted("resume")) {
      await bundleRunner(Path.join(import.meta.dirname, "support", "dlsyncRun.ts"), Path.dirname(RUNNER))
      const r = await emulator("r", origin, (url) => addLibrary(url, "r", true))
      const ctx: Ctx = { ...peers, api: r.api, emulatorPid: r.child.pid ?? 0, big: r.big, small: r.small, tag: r.tag }
      if (wanted("small")) small(ctx)
      if (wanted("resume")) await resume(ctx)
    }
  } finally {
    for (const e of emulators) e.kill("SIGTERM")
    nginx.kill("SIGTERM")
  }
  if (args.only === undefined) await memory()
}

/** bench/memory.ts with its defaults: the daemon's RSS idle, under HTTP load, mirroring and churn. */
const memory = async () => {
  const { main } = await import("./memory.ts")
  await main()
}

type RemoteFile = DlsyncJob["files"][number]

interface Library {
  readonly big: RemoteFile
  readonly small: ReadonlyArray<RemoteFile>
}

/** What every row needs to reach nginx: its origin, and the certificate to trust (https). */
interface Peers {
  readonly cdn: string
  readonly caCert: string | undefined
  readonly env: NodeJS.ProcessEnv
}

/** The whole-process rows: the installed CLI and the emulator whose account holds only big.bin. */
interface Whole extends Peers {
  readonly cli: string
  readonly api: DlsyncJob["api"]
}

interface Ctx extends Peers, Library {
  /** The service emulator's process: its CPU shares the cores with dlsync's. */
  readonly emulatorPid: number
  readonly api: DlsyncJob["api"]
  /** The emulator's tag in nginx's link paths (/e/<tag>/dl/…). */
  readonly tag: string
}

// --- one 2 GiB file, whole processes -------------------------------------------------------------

const DLSYNC = "dlsync run --once"
const RCLONE_DURABLE = "rclone 4 streams && sync FILE"
const DLSYNC_PINNED = "dlsync run --once, taskset -c 0"
const RCLONE_PINNED = "rclone 4 streams && sync FILE, taskset -c 0"
/**
 * support/socketFloor.ts: what a bare Node 24 process pays for the bytes alone, on one socket
 * (where dlsync runs this file: one fills this link, so its step to 4 is given back)…
 */
const NODE_FLOOR = "Node floor: 1 socket, onread, fdatasync (diag.)"
/** …and on 4, as rclone's 4 streams: what connections cost where they bring nothing. */
const NODE_FLOOR_4 = "Node floor: 4 sockets, onread, fdatasync (diag.)"
/** The same process on an empty account: its start-up, subtracted in the goals' info rows. */
const DLSYNC_STARTUP = "dlsync run --once, empty account (start-up, diag.)"
/** support/stackFloor.ts: the start of an empty Effect CLI program installed as dlsync is. */
const STACK_FLOOR = "stack floor: empty Effect CLI, via the launcher (diag.)"
const NODE_START = "Node start: node -e 0 (diag.)"
const STACK_FLOOR_DIR = Path.join(DIR, "stack-floor")
/** The start-up rows: no big.bin to check after them. */
const DOWNLOAD_NOTHING: ReadonlySet<string> = new Set([DLSYNC_STARTUP, STACK_FLOOR, NODE_START])
/** The row of `--dlsync-node-flags`. */
const DLSYNC_FLAGGED = `${DLSYNC}, ${[...NODE_FLAGS, ...Object.entries(EXTRA_ENV).map(([k, v]) => `${k}=${v}`)].join(" ")}`

/** The plain dlsync row, and the flagged one beside it when `--dlsync-node-flags` asks for it. */
const dlsyncRows = (w: Whole): Record<string, () => Measured> => ({
  [DLSYNC]: () => dlsyncOnce(w),
  ...(FLAGGED ? { [DLSYNC_FLAGGED]: () => dlsyncOnce(w, [], NODE_FLAGS, EXTRA_ENV) } : {})
})

/** Information rows: the flagged dlsync against the plain one, pair by pair (none without flags). */
const flaggedGoals = (ratio: ReturnType<typeof pairRatio>) =>
  !FLAGGED
    ? []
    : [
        goal(`${DLSYNC_FLAGGED} wall / ${DLSYNC}`, ratio(DLSYNC_FLAGGED, DLSYNC, wall), undefined),
        goal(`${DLSYNC_FLAGGED} CPU s / ${DLSYNC}`, ratio(DLSYNC_FLAGGED, DLSYNC, cpu), undefined)
      ]

const big = (w: Whole, empty: Whole, stackFloor: Whole) => {
  const tools: Record<string, () => Measured> = {
    ...dlsyncRows(w),
    [DLSYNC_STARTUP]: () => dlsyncOnce(empty),
    // A home of its own: the launcher keeps only its own build's code cache in a home.
    [STACK_FLOOR]: () => dlsyncOnce(stackFloor, [], [], { HOME: STACK_FLOOR_DIR }),
    [NODE_START]: () => peer([NODE, "-e", "0"]),
    [RCLONE_DURABLE]: () => durable(rclone4(w)),
    "rclone 4 streams (page cache)": () => peer(rclone4(w)),
    "curl -o && sync FILE": () => durable(curl(w)),
    "curl -o (page cache)": () => peer(curl(w)),
    "aria2c -x4 -s4 && sync FILE": () => durable(aria2c(w, 4)),
    "disk: dd conv=fdatasync": () =>
      peer([
        "dd",
        "if=/dev/zero",
        `of=${Path.join(OUT, "big.bin")}`,
        "bs=1M",
        `count=${BIG / 2 ** 20}`,
        "conv=fdatasync",
        "status=none"
      ]),
    [NODE_FLOOR]: () => socketFloor(w, 1),
    [NODE_FLOOR_4]: () => socketFloor(w, 4),
    [DLSYNC_PINNED]: () => dlsyncOnce(w, ["taskset", "-c", "0"]),
    [RCLONE_PINNED]: () => durable(["taskset", "-c", "0", ...rclone4(w)])
  }
  const results = rounds(tools, (row) => {
    if (!DOWNLOAD_NOTHING.has(row)) checkBig()
  })
  verifyBig(w)
  bigTable(`One ${(BIG / 2 ** 20).toFixed(0)} MiB file over ${SCHEME}, whole processes`, results)
  const ratio = pairRatio(results)
  const rss = stats((results[DLSYNC] ?? []).map((m) => m.maxRssMB))
  console.log(
    `\nGoals (issue 20), ${SCHEME}: ratios pair by pair within a round, median (min–max); judged on the median`
  )
  goalTable([
    goal(`${DLSYNC} wall / ${RCLONE_DURABLE}`, ratio(DLSYNC, RCLONE_DURABLE, wall), 1.0, "stretch ≤ 0.8"),
    goal(`${DLSYNC} CPU s / ${RCLONE_DURABLE}`, ratio(DLSYNC, RCLONE_DURABLE, cpu), 1.0),
    goal(`${DLSYNC} peak RSS MB`, rss, 100, "", 0),
    goal(`${DLSYNC_PINNED} wall / ${RCLONE_PINNED}`, ratio(DLSYNC_PINNED, RCLONE_PINNED, wall), 1.0),
    goal(
      `${DLSYNC} wall / disk: dd conv=fdatasync`,
      ratio(DLSYNC, "disk: dd conv=fdatasync", wall),
      undefined,
      "the disk's floor"
    ),
    goal(`${DLSYNC} CPU s / ${NODE_FLOOR}`, ratio(DLSYNC, NODE_FLOOR, cpu), undefined, "Node's floor"),
    goal(
      `${DLSYNC} CPU s less its start-up / ${RCLONE_DURABLE}`,
      pairwise(results, (at) => (cpu(at(DLSYNC)) - cpu(at(DLSYNC_STARTUP))) / cpu(at(RCLONE_DURABLE))),
      undefined,
      "the bytes alone"
    ),
    goal(
      `best on this stack (Node floor, 1 socket + stack floor - Node start) CPU s / ${RCLONE_DURABLE}`,
      pairwise(
        results,
        (at) => (cpu(at(NODE_FLOOR)) + cpu(at(STACK_FLOOR)) - cpu(at(NODE_START))) / cpu(at(RCLONE_DURABLE))
      ),
      undefined,
      "the best this stack allows"
    ),
    goal(
      "dlsync's own start-up (its start-up less the stack floor), CPU s",
      pairwise(results, (at) => cpu(at(DLSYNC_STARTUP)) - cpu(at(STACK_FLOOR))),
      undefined,
      "dlsync's own start"
    ),
    ...flaggedGoals(ratio)
  ])
  console.log("")
}

// --- the same file from a CDN that caps each connection ------------------------------------

const big_capped_aria = "aria2c -x16 -s16 && sync FILE"
const big_capped_rclone = "rclone 4 streams && sync FILE"

const capped = (w: Whole) => {
  const tools: Record<string, () => Measured> = {
    ...dlsyncRows(w),
    [big_capped_aria]: () => durable(aria2c(w, 16)),
    [big_capped_rclone]: () => durable(rclone4(w))
  }
  const results = rounds(tools, checkBig)
  bigTable(
    `One ${(BIG / 2 ** 20).toFixed(0)} MiB file over ${SCHEME}, every connection capped at ${CAPPED_RATE.replace("m", " MiB")}/s (nginx limit_rate ${CAPPED_RATE})`,
    results
  )
  const ratio = pairRatio(results)
  console.log(`\nGoals (issue 20), capped CDN: ratios pair by pair within a round, median (min–max)`)
  goalTable([
    goal(`${DLSYNC} wall / ${big_capped_aria}`, ratio(DLSYNC, big_capped_aria, wall), 1.1),
    goal(`${DLSYNC} wall / ${big_capped_rclone}`, ratio(DLSYNC, big_capped_rclone, wall), 0.3),
    ...flaggedGoals(ratio)
  ])
  console.log("")
}

const wall = (m: Measured) => m.seconds
const cpu = (m: Measured) => m.cpuSeconds

/** The file a big row leaves: dlsync's at the account's root, the peers' by name, dd's too. */
const checkBig = () => {
  const size = Fs.statSync(Path.join(OUT, "big.bin")).size
  if (size !== BIG) throw new Error(`big.bin: ${size} bytes, expected ${BIG}`)
}

const bigTable = (title: string, results: Record<string, Array<Measured>>) => {
  console.log(`${title} — median (min–max)`)
  table(
    ["run", "wall s", "MB/s", "CPU s", "peak RSS MB"],
    Object.entries(results).map(([name, ms]) => [
      name,
      fmt(stats(ms.map(wall)), 2),
      fmt(stats(ms.map((m) => BIG / m.seconds / 1e6))),
      name.startsWith("disk") ? "—" : fmt(stats(ms.map(cpu)), 2),
      name.startsWith("disk") ? "—" : fmt(stats(ms.map((m) => m.maxRssMB)))
    ])
  )
}

/** a / b of one figure, pair by pair within each round. */
const pairRatio =
  (results: Record<string, Array<Measured>>) =>
  (a: string, b: string, f: (m: Measured) => number): Stats =>
    pairwise(results, (at) => f(at(a)) / f(at(b)))

/**
 * A figure of several rows, round by round (`at(row)`: that row's measure in the round; NaN
 * for a row left out by `--rows`).
 */
const pairwise = (results: Record<string, Array<Measured>>, f: (at: (row: string) => Measured) => number): Stats => {
  const at = (round: number) => (row: string) => results[row]?.[round] ?? LEFT_OUT
  return stats(Array.from({ length: RUNS }, (_, round) => f(at(round))))
}

const LEFT_OUT: Measured = { seconds: Number.NaN, cpuSeconds: Number.NaN, maxRssMB: Number.NaN }

/** One goal row: the figure, its bound (none: information only) and whether the median meets it. */
const goal = (what: string, value: Stats, atMost: number | undefined, note = "", digits = 2) => [
  what,
  fmt(value, digits),
  atMost === undefined ? "(info)" : `≤ ${atMost.toFixed(digits === 0 ? 0 : 1)}`,
  atMost === undefined ? "" : value.median <= atMost ? "pass" : "FAIL",
  note
]

const goalTable = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  table(["measure", "value", "goal", "met", "note"], rows)
  if (BIG !== 2 ** 31) console.log("(the goals are set for 2 GiB: on a smaller file dlsync's start-up weighs more)")
  if (RUNS < 5) console.log("(the goals ask for medians of ≥ 5 rounds)")
}

/**
 * `dlsync run --once` of the installed CLI, a fresh state and an empty root, timed from
 * outside as a whole: configured as a user would (environment), trusting the benchmark's
 * certificate through NODE_EXTRA_CA_CERTS; `prefix` runs it under e.g. taskset, `nodeFlags`
 * are given to node before the launcher, `extraEnv` added to its environment.
 */
const dlsyncOnce = (
  w: Whole,
  prefix: ReadonlyArray<string> = [],
  nodeFlags: ReadonlyArray<string> = [],
  extraEnv: Record<string, string> = {}
): Measured => {
  // Started as a program, as systemd, cron and a shell start it (the launcher's shell lines
  // start Node once); given Node flags, by `node FLAGS launcher`, which re-executes itself
  // unless they include --max-semi-space-size.
  const started = nodeFlags.length === 0 ? [w.cli] : [NODE, ...nodeFlags, w.cli]
  const [command = NODE, ...rest] = [...prefix, ...started, "run", "--once"]
  return measure(which(command) ?? command, rest, dlsyncEnv(w, extraEnv))
}

/** The environment of a whole dlsync process: configured as a user would, everything else on its defaults. */
const dlsyncEnv = (w: Whole, extraEnv: Record<string, string>): Record<string, string> => {
  return {
    // The launcher's `node` is the Node that runs the benchmark.
    PATH: `${Path.dirname(NODE)}:${process.env.PATH ?? ""}`,
    HOME: DIR,
    XDG_CONFIG_HOME: Path.join(DIR, "config"),
    NO_COLOR: "1",
    ...(w.env.NODE_EXTRA_CA_CERTS === undefined ? {} : { NODE_EXTRA_CA_CERTS: w.env.NODE_EXTRA_CA_CERTS }),
    DLSYNC_SERVICE_BASE_URL: w.api.baseUrl,
    DLSYNC_SERVICE_API_KEY: w.api.apiKey,
    DLSYNC_MIRROR_ROOT: OUT,
    DLSYNC_MIRROR_STATE_DIR: STATE,
    DLSYNC_TRANSFERS_MIN_FREE_SPACE: "0",
    DLSYNC_LOG_LEVEL: args.verbose === true ? "info" : "warn",
    ...extraEnv
  }
}

const rclone4 = (p: Peers) => [
  "rclone",
  "copy",
  ...rcloneFlags(p),
  "--http-url",
  `${p.cdn}/`,
  "--multi-thread-streams",
  "4",
  "--multi-thread-cutoff",
  "64M",
  ":http:big.bin",
  OUT
]

const curl = (p: Peers) => [
  "curl",
  "-sS",
  ...(p.caCert === undefined ? [] : ["--cacert", p.caCert]),
  "-o",
  Path.join(OUT, "big.bin"),
  `${p.cdn}/big.bin`
]

const aria2c = (p: Peers, connections: number) => [
  "aria2c",
  "-q",
  `-x${connections}`,
  `-s${connections}`,
  "-k1M",
  "--file-allocation=falloc",
  "--allow-overwrite=true",
  ...(p.caCert === undefined ? [] : [`--ca-certificate=${p.caCert}`]),
  "-d",
  OUT,
  "-o",
  "big.bin",
  `${p.cdn}/big.bin`
]

/** support/socketFloor.ts on `connections` sockets, fetching big.bin into OUT. */
const socketFloor = (p: Peers, connections: number): Measured =>
  peer([
    NODE,
    Path.join(import.meta.dirname, "support", "socketFloor.ts"),
    `${p.cdn}/big.bin`,
    Path.join(OUT, "big.bin"),
    String(BIG),
    String(connections),
    ...(p.caCert === undefined ? [] : [p.caCert])
  ])

/** A peer's command, then `sync FILE` (fsync of what it wrote), as durable as dlsync's landing. */
const durable = (argv: ReadonlyArray<string>): Measured =>
  measure("/bin/sh", ["-c", '"$@" && sync "$0"', Path.join(OUT, "big.bin"), ...resolved(argv)])

const resolved = ([command = "", ...rest]: ReadonlyArray<string>) => [which(command) ?? command, ...rest]

/** One byte-for-byte comparison (sha256) of dlsync's whole-process copy with the source. */
const verifyBig = (w: Whole) => {
  cleanOut()
  dlsyncOnce(w)
  if (hashFile(Path.join(WWW, "big.bin")) !== hashFile(Path.join(OUT, "big.bin"))) {
    throw new Error("dlsync's copy of big.bin differs from the source")
  }
  console.log("verified: dlsync's copy is byte-identical (sha256)\n")
  cleanOut()
}

// --- 2,000 files of 64 KiB ---------------------------------------------------------------------

const FLOOR = "Node floor, same steps (diag.)"
const FLOOR_NO_LINKS = "Node floor, no links (diag.)"

const small = (ctx: Ctx) => {
  const rcloneSmall = (transfers: string) => () =>
    peer([
      "rclone",
      "copy",
      ...rcloneFlags(ctx),
      "--http-url",
      `${ctx.cdn}/small/`,
      "--transfers",
      transfers,
      ":http:",
      OUT
    ])
  const tools: Record<string, () => Measured> = {
    "dlsync (concurrency 8)": () => dlsync(ctx, ctx.small, { concurrency: 8 }),
    "dlsync no fsync (diag.)": () => dlsync(ctx, ctx.small, { concurrency: 8 }, { noFsync: true }),
    "rclone --transfers 4": rcloneSmall("4"),
    "rclone --transfers 8": rcloneSmall("8"),
    [FLOOR]: () => nodeFloor(ctx, true),
    [FLOOR_NO_LINKS]: () => nodeFloor(ctx, false)
  }
  const results = rounds(tools, () => {
    const dir = Fs.existsSync(Path.join(OUT, "out", "small")) ? Path.join(OUT, "out", "small") : OUT
    const n = Fs.readdirSync(dir).length
    if (n !== SMALL_COUNT) throw new Error(`${n} files arrived, expected ${SMALL_COUNT}`)
  })
  const fps = (m: Measured) => SMALL_COUNT / m.seconds
  console.log(
    `${SMALL_COUNT} files of 64 KiB over ${SCHEME} — dlsync's engine in a bench runner (module loading excluded, not the whole process) — files/s, CPU s, peak RSS MB: median (min–max)`
  )
  table(
    ["tool", "files/s", "CPU s", "RSS MB", "service CPU s"],
    Object.entries(results).map(([name, ms]) => [
      name,
      fmt(stats(ms.map(fps))),
      fmt(stats(ms.map((m) => m.cpuSeconds)), 2),
      fmt(stats(ms.map((m) => m.maxRssMB))),
      ms[0]?.serviceCpuSeconds === undefined ? "—" : fmt(stats(ms.map((m) => m.serviceCpuSeconds ?? 0)), 2)
    ])
  )
  console.log("(service CPU: the emulator answering dlsync's link requests, on the same 2 cores.)")
  const d = results["dlsync (concurrency 8)"] ?? []
  const r4 = results["rclone --transfers 4"] ?? []
  const r8 = results["rclone --transfers 8"] ?? []
  const vsBest = (ms: ReadonlyArray<Measured>) => ms.map((m, i) => fps(m) / Math.max(fps(r4[i] ?? m), fps(r8[i] ?? m)))
  const floor = results[FLOOR] ?? []
  console.log("(Node floor: plain Node 24 + undici doing the same steps, nothing of dlsync; see support/nodeFloor.ts.)")
  console.log("\nRatios, pair by pair within a round: median (min–max)")
  table(
    ["pair", "ratio", "goal"],
    [
      ["dlsync / better rclone", fmt(stats(vsBest(d)), 2), "files/s ≥ 1.0"],
      ["dlsync / Node floor, same steps", fmt(stats(d.map((m, i) => fps(m) / fps(floor[i] ?? m))), 2), "(info)"],
      [`${FLOOR} / better rclone`, fmt(stats(vsBest(floor)), 2), "(info)"],
      [`${FLOOR_NO_LINKS} / better rclone`, fmt(stats(vsBest(results[FLOOR_NO_LINKS] ?? [])), 2), "(info)"]
    ]
  )
  console.log("")
}

// --- 2,000 files of 64 KiB in one folder: the ZIP path, whole processes ------------------------------

const ZIP_DLSYNC = "dlsync run --once (ZIP archives)"
const ZIP_PER_FILE = "dlsync run --once, per file (zip_min_files = 0)"
const ZIP_SLOW = `dlsync run --once (ZIP archives), ${ZIP_LATENCY_MS} ms API latency`
const ZIP_SLOW_PER_FILE = `dlsync run --once, per file, ${ZIP_LATENCY_MS} ms API latency`
const ZIP_FLOOR = "Node floor: archives, batch fsync (diag.)"
const ZIP_SLOW_FLOOR = `Node floor: archives, batch fsync, ${ZIP_LATENCY_MS} ms API latency (diag.)`
const RCLONE_T4_SYNC = "rclone --transfers 4 && sync -f"
const RCLONE_T8_SYNC = "rclone --transfers 8 && sync -f"
const RCLONE_T4 = "rclone --transfers 4 (page cache)"
const RCLONE_T8 = "rclone --transfers 8 (page cache)"
/** dlsync on its own per-file path. */
const PER_FILE = { DLSYNC_TRANSFERS_ZIP_MIN_FILES: "0" }

/**
 * `--hold`: the environment of one dlsync run on each account, written for a shell to source
 * (`set -a; . zip.env; set +a; rm -rf "$DLSYNC_MIRROR_ROOT" "$DLSYNC_MIRROR_STATE_DIR"; dlsync run --once`),
 * until SIGINT or SIGTERM.
 */
const holdZip = async (plain: ZipAccount, slow: ZipAccount) => {
  const write = (name: string, account: ZipAccount) => {
    const env = dlsyncEnv(account, {})
    const file = Path.join(DIR, name)
    Fs.writeFileSync(
      file,
      `${Object.entries(env)
        .map(([k, v]) => `${k}='${v}'`)
        .join("\n")}\nBENCH_DLSYNC_CLI='${account.cli}'\n`
    )
    console.log(`${file} (emulator pid ${account.emulatorPid})`)
  }
  write("zip.env", plain)
  write("zip-latency.env", slow)
  console.log("holding the zip section's setup until Ctrl-C (SIGINT or SIGTERM)")
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve)
    process.once("SIGTERM", resolve)
  })
}

interface ZipAccount extends Whole {
  /** The emulator building the archives: its CPU shares the cores with dlsync's. */
  readonly emulatorPid: number
}

const zipSection = (plain: ZipAccount, slow: ZipAccount) => {
  const rclone = (transfers: number) => [
    "rclone",
    "copy",
    ...rcloneFlags(plain),
    "--http-url",
    `${plain.cdn}/small/`,
    "--transfers",
    String(transfers),
    ":http:",
    OUT
  ]
  /** A peer's command, then `sync -f` of the target (syncfs: as durable as dlsync's landings). */
  const durableDir = (argv: ReadonlyArray<string>): Measured =>
    measure("/bin/sh", ["-c", '"$@" && sync -f "$0"', OUT, ...resolved(argv)])
  /** dlsync's run with the CPU its emulator spent meanwhile (building archives, answering links). */
  const withService = (account: ZipAccount, run: () => Measured): Measured => {
    const before = processCpuSeconds(account.emulatorPid)
    const m = run()
    return { ...m, serviceCpuSeconds: processCpuSeconds(account.emulatorPid) - before }
  }
  const dlsyncOn = (account: ZipAccount, extraEnv: Record<string, string> = {}) =>
    withService(account, () => dlsyncOnce(account, [], [], extraEnv))
  /** The same work in a bare Node process (support/zipFloor.ts): listing, archives, batched landings. */
  const floor = (account: ZipAccount) => () =>
    withService(account, () =>
      measure(
        NODE,
        [Path.join(import.meta.dirname, "support", "zipFloor.ts"), account.api.baseUrl, account.api.apiKey, OUT],
        account.env
      )
    )
  const tools: Record<string, () => Measured> = {
    [ZIP_DLSYNC]: () => dlsyncOn(plain),
    [ZIP_FLOOR]: floor(plain),
    [RCLONE_T4_SYNC]: () => durableDir(rclone(4)),
    [RCLONE_T8_SYNC]: () => durableDir(rclone(8)),
    [RCLONE_T4]: () => peer(rclone(4)),
    [RCLONE_T8]: () => peer(rclone(8)),
    [ZIP_PER_FILE]: () => dlsyncOn(plain, PER_FILE),
    [ZIP_SLOW]: () => dlsyncOn(slow),
    [ZIP_SLOW_PER_FILE]: () => dlsyncOn(slow, PER_FILE),
    [ZIP_SLOW_FLOOR]: floor(slow)
  }
  const results = rounds(tools, () => {
    const dir = Fs.existsSync(Path.join(OUT, "small")) ? Path.join(OUT, "small") : OUT
    const n = Fs.readdirSync(dir).length
    if (n !== SMALL_COUNT) throw new Error(`${n} files arrived, expected ${SMALL_COUNT}`)
  })
  const fps = (m: Measured) => SMALL_COUNT / m.seconds
  console.log(
    `${SMALL_COUNT} files of 64 KiB in one folder over ${SCHEME}, whole processes (the archives through nginx from the emulator that builds them) — median (min–max)`
  )
  table(
    ["run", "wall s", "files/s", "CPU s", "peak RSS MB", "service CPU s"],
    Object.entries(results).map(([name, ms]) => [
      name,
      fmt(stats(ms.map(wall)), 2),
      fmt(stats(ms.map(fps))),
      fmt(stats(ms.map(cpu)), 2),
      fmt(stats(ms.map((m) => m.maxRssMB))),
      ms[0]?.serviceCpuSeconds === undefined ? "—" : fmt(stats(ms.map((m) => m.serviceCpuSeconds ?? 0)), 2)
    ])
  )
  console.log("(service CPU: the emulator building the archives or answering link requests, on the same 2 cores.)")
  console.log(
    "(Node floor: a bare Node 24 process listing the account, asking for the same archives and landing their members in batches as dlsync does; see support/zipFloor.ts.)"
  )
  const ratio = pairRatio(results)
  const better = (a: string, b: string) => (at: (row: string) => Measured) => Math.min(wall(at(a)), wall(at(b)))
  const durableBest = better(RCLONE_T4_SYNC, RCLONE_T8_SYNC)
  const pageCacheBest = better(RCLONE_T4, RCLONE_T8)
  const rss = stats([ZIP_DLSYNC, ZIP_SLOW].flatMap((row) => (results[row] ?? []).map((m) => m.maxRssMB)))
  console.log(
    `\nGoals (issue 38), ${SCHEME}: ratios pair by pair within a round, median (min–max); judged on the median`
  )
  goalTable([
    goal(
      `${ZIP_DLSYNC} wall / the better rclone && sync -f`,
      pairwise(results, (at) => wall(at(ZIP_DLSYNC)) / durableBest(at)),
      1.0,
      "files/s ≥ 1.0×"
    ),
    goal(
      `${ZIP_DLSYNC} wall / the better rclone (page cache)`,
      pairwise(results, (at) => wall(at(ZIP_DLSYNC)) / pageCacheBest(at)),
      1.0,
      "stretch"
    ),
    goal(
      `${ZIP_SLOW} wall / ${ZIP_SLOW_PER_FILE}`,
      ratio(ZIP_SLOW, ZIP_SLOW_PER_FILE, wall),
      0.1,
      "≥ 10× its per-file path"
    ),
    goal(
      `${ZIP_FLOOR} wall / the better rclone && sync -f`,
      pairwise(results, (at) => wall(at(ZIP_FLOOR)) / durableBest(at)),
      undefined,
      "what any Node program reaches here"
    ),
    goal(`${ZIP_DLSYNC} wall / ${ZIP_FLOOR}`, ratio(ZIP_DLSYNC, ZIP_FLOOR, wall), undefined, "dlsync's own"),
    goal(`${ZIP_DLSYNC} CPU s / ${ZIP_FLOOR}`, ratio(ZIP_DLSYNC, ZIP_FLOOR, cpu), undefined),
    goal(
      `${ZIP_SLOW_FLOOR} wall / ${ZIP_SLOW_PER_FILE}`,
      ratio(ZIP_SLOW_FLOOR, ZIP_SLOW_PER_FILE, wall),
      undefined,
      "what any Node program reaches here"
    ),
    goal(`${ZIP_DLSYNC} wall / ${ZIP_PER_FILE}`, ratio(ZIP_DLSYNC, ZIP_PER_FILE, wall), undefined, "no latency"),
    goal(`${ZIP_DLSYNC} CPU s / ${ZIP_PER_FILE}`, ratio(ZIP_DLSYNC, ZIP_PER_FILE, cpu), undefined),
    goal("dlsync (ZIP rows) peak RSS MB", rss, 100, "whole process", 0)
  ])
  console.log("")
}

// --- resume after SIGKILL at 50 % --------------------------------------------------------------------

const resume = async (ctx: Ctx) => {
  const fetchedAgain: Array<number> = []
  const notDurable: Array<number> = []
  for (let round = 0; round < RUNS; round++) {
    cleanOut()
    const logBefore = Fs.statSync(Path.join(DIR, "access.log")).size
    const job = dlsyncJob(ctx, [ctx.big], { segments: 4 }, true)
    const child = ChildProcess.spawn(NODE, [RUNNER, JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "inherit"],
      env: ctx.env
    })
    let writtenAtKill = 0
    const exited = new Promise((r) => child.once("exit", r))
    await new Promise<void>((resolve, reject) => {
      // Without this, a runner that fails or ends before half the file would hang the bench.
      void exited.then(() => reject(new Error("resume: the runner ended before half the file was written")))
      let buffered = ""
      child.stdout.on("data", (d: Buffer) => {
        buffered += d.toString()
        const lines = buffered.split("\n")
        buffered = lines.pop() ?? ""
        for (const line of lines) {
          if (line.startsWith("progress ") && Number(line.slice(9)) >= BIG / 2) {
            child.kill("SIGKILL")
            writtenAtKill = Number(line.slice(9))
            resolve()
          }
        }
      })
    })
    await exited
    const second = JSON.parse(
      ChildProcess.execFileSync(NODE, [RUNNER, JSON.stringify({ ...job, progress: false })], {
        encoding: "utf8",
        env: ctx.env
      })
        .trim()
        .split("\n")
        .pop() ?? "{}"
    )
    if (second.failed?.length > 0) throw new Error(`resume failed: ${second.failed}`)
    // nginx logs a request when it ends, the killed ones included; with the URI as rewritten
    // from the link's /e/<tag>/dl/<id>/<name>.
    await new Promise((r) => setTimeout(r, 300))
    const log = Fs.readFileSync(Path.join(DIR, "access.log"), "utf8").slice(logBefore)
    const sent = log
      .split("\n")
      .filter((l) => l.startsWith(`/${ctx.tag}/${ctx.big.id} `))
      .reduce((n, l) => n + Number(l.split(" ")[2] ?? 0), 0)
    fetchedAgain.push((sent - BIG) / BIG)
    // Written by the killed run but not durable, so written again: what the restart fetched
    // beyond what was missing at the kill (progress is printed every 20 ms: a lower bound).
    notDurable.push((writtenAtKill - (BIG - second.fetched)) / BIG)
    syncDisks()
  }
  console.log(`Resume over ${SCHEME}: the engine in a bench runner SIGKILLed at 50 % of the big file, then restarted`)
  table(
    ["measure", "value", "goal"],
    [
      ["bytes fetched again (nginx's count), % of size", fmt(stats(fetchedAgain.map((x) => x * 100)), 2), "≤ 1 %"],
      ["of which written but not durable, % of size", fmt(stats(notDurable.map((x) => x * 100)), 2), "(engine)"]
    ]
  )
  console.log("")
}

// --- helpers ------------------------------------------------------------------------------------

/** Runs every tool once per round, in the same order each round; returns measurements per tool. */
const rounds = (
  tools: Record<string, () => Measured>,
  check: (row: string) => void
): Record<string, Array<Measured>> => {
  const out: Record<string, Array<Measured>> = {}
  const wanted = Object.entries(tools).filter(([name]) => args.rows === undefined || new RegExp(args.rows).test(name))
  for (let round = -WARMUP; round < RUNS; round++) {
    for (const [name, run] of wanted) {
      cleanOut()
      syncDisks()
      const m = run()
      check(name)
      const label = round < 0 ? `warm-up ${round + WARMUP + 1}` : `round ${round + 1}`
      process.stderr.write(`  ${label} ${name}: ${m.seconds.toFixed(2)} s\n`)
      if (round < 0) continue
      const list = out[name] ?? []
      list.push(m)
      out[name] = list
    }
  }
  cleanOut()
  return out
}

const dlsyncJob = (
  ctx: Ctx,
  files: DlsyncJob["files"],
  options: Record<string, number>,
  progress = false
): DlsyncJob => ({
  api: ctx.api,
  root: OUT,
  stateDir: STATE,
  files,
  options,
  progress
})

/** dlsync's own figures: measured inside the runner over the transfers (startup excluded). */
const dlsync = (
  ctx: Ctx,
  files: DlsyncJob["files"],
  options: Record<string, number>,
  extra: Partial<DlsyncJob> = {}
): Measured =>
  measuredInside(ctx, [...profileFlags(), RUNNER], {
    ...dlsyncJob(ctx, files, options),
    ...(args["split-links"] === true ? { linksFirst: true } : {}),
    ...extra
  })

/** The plain-Node floor of the same work (support/nodeFloor.ts), with or without asking for links. */
const nodeFloor = (ctx: Ctx, links: boolean): Measured =>
  measuredInside(ctx, [Path.join(import.meta.dirname, "support", "nodeFloor.ts")], {
    ...dlsyncJob(ctx, ctx.small, {}),
    links,
    cdn: `${ctx.cdn}/e/${ctx.tag}`
  })

/** A Node process that measures itself (startup excluded) and prints its figures as its last line. */
const measuredInside = (ctx: Ctx, argv: ReadonlyArray<string>, job: DlsyncJob & Record<string, unknown>): Measured => {
  const serviceCpu0 = processCpuSeconds(ctx.emulatorPid)
  const out = ChildProcess.execFileSync(NODE, [...argv, JSON.stringify(job)], {
    encoding: "utf8",
    env: ctx.env,
    maxBuffer: 64 * 1024 * 1024
  })
  const r: Measured & { failed: Array<string> } = JSON.parse(out.trim().split("\n").pop() ?? "{}")
  if (args.verbose === true) console.log(out.trim())
  if (r.failed.length > 0)
    throw new Error(`${Path.basename(argv.at(-1) ?? "")} failed: ${r.failed.slice(0, 3).join("; ")}`)
  return { ...r, serviceCpuSeconds: processCpuSeconds(ctx.emulatorPid) - serviceCpu0 }
}

const profileFlags = () => (args.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", args.profile])

/** A peer's command line, measured from outside. */
const peer = ([command = "", ...rest]: ReadonlyArray<string>): Measured => measure(which(command) ?? command, rest)

/** rclone with an empty config of its own, trusting the benchmark's certificate on https. */
const rcloneFlags = (p: Peers) => {
  const config = Path.join(DIR, "rclone.conf")
  if (!Fs.existsSync(config)) Fs.writeFileSync(config, "")
  return ["--config", config, "-q", ...(p.caCert === undefined ? [] : ["--ca-cert", p.caCert])]
}

const cleanOut = () => {
  Fs.rmSync(OUT, { recursive: true, force: true })
  Fs.rmSync(STATE, { recursive: true, force: true })
  Fs.mkdirSync(OUT, { recursive: true })
}

const smallName = (i: number) => `${String(i).padStart(4, "0")}.bin`

/**
 * Starts `dlsync emulator` of the installed CLI in its own process (its CPU is not dlsync's),
 * with an empty library, the control API, and links pointing at `cdn`; returns what `--json`
 * printed. `contentDir` is where it (and nginx) find each file's bytes by id.
 */
const startEmulator = (cli: string, cdn: string, contentDir: string, env: NodeJS.ProcessEnv, cdnPort?: number) =>
  new Promise<{ child: ChildProcess.ChildProcess; api: DlsyncJob["api"]; controlUrl: string }>((resolve, reject) => {
    Fs.mkdirSync(contentDir, { recursive: true })
    const child = ChildProcess.spawn(
      NODE,
      [
        cli,
        "emulator",
        "--port",
        "0",
        "--json",
        "--control",
        "--library",
        "empty",
        "--cdn-base",
        cdn,
        "--content-dir",
        contentDir,
        ...(cdnPort === undefined ? [] : ["--cdn-port", String(cdnPort)])
      ],
      { stdio: ["ignore", "pipe", "inherit"], env }
    )
    emulatorJson<{ base_url: string; auth_url: string; access_token: string; control_url: string }>(child).then(
      (info) =>
        resolve({
          child,
          // The signed-in account's token, as after `dlsync login`: it reads the change feed,
          // which a personal API key may not.
          api: { baseUrl: info.base_url, authUrl: info.auth_url, apiKey: info.access_token },
          controlUrl: info.control_url
        }),
      (e: unknown) => reject(new BenchSetupError(`dlsync emulator did not start: ${String(e)}`))
    )
  })

/**
 * Adds the benchmark's files to an emulator's account through the control API (big.bin unless
 * not `withBig`, and with `withSmall` small/NNNN.bin, the sizes of the files in www) and links each id to
 * its file in `ids/<tag>/`, where nginx and the emulator (`--content-dir`) find the bytes.
 */
const addLibrary = async (controlUrl: string, tag: string, withSmall: boolean, withBig = true): Promise<Library> => {
  const add = async (body: Record<string, unknown>): Promise<string> => {
    const res = await fetch(`${controlUrl}/files`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (res.status !== 201) throw new Error(`emulator: adding ${body.name}: ${res.status} ${await res.text()}`)
    return ((await res.json()) as { data: { id: string } }).data.id
  }
  const file = async (name: string, parentId: string | null, path: string, size: number): Promise<RemoteFile> => {
    const id = await add({ type: "file", name, parent_id: parentId, size_bytes: size })
    Fs.symlinkSync(Path.join("..", "..", "www", path), Path.join(IDS, tag, id))
    return { id, path, size }
  }
  const big = withBig ? await file("big.bin", null, "big.bin", BIG) : { id: "", path: "big.bin", size: BIG }
  const small: Array<RemoteFile> = []
  if (withSmall) {
    const folder = await add({ type: "folder", name: "small" })
    for (let i = 0; i < SMALL_COUNT; i++) {
      small.push(await file(smallName(i), folder, `small/${smallName(i)}`, SMALL_SIZE))
    }
  }
  return { big, small }
}

/** One call to an emulator's control API that must succeed. */
const control = async (controlUrl: string, method: string, path: string, body: unknown): Promise<void> => {
  const res = await fetch(`${controlUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!res.ok) throw new BenchSetupError(`emulator control ${method} ${path}: ${res.status} ${await res.text()}`)
}

/** Generates the data once: a big file of repeated random blocks and the small files. */
const prepareData = () => {
  Fs.mkdirSync(Path.join(WWW, "small"), { recursive: true })
  const bigPath = Path.join(WWW, "big.bin")
  if (Fs.statSync(bigPath, { throwIfNoEntry: false })?.size !== BIG) {
    console.log(`generating ${bigPath}…`)
    const block = Crypto.randomBytes(64 * 1024 * 1024)
    const fd = Fs.openSync(bigPath, "w")
    for (let at = 0; at < BIG; at += block.length) {
      // Stamp each block so equal blocks at different offsets still differ.
      block.writeUInt32LE(at / block.length, 0)
      Fs.writeSync(fd, block, 0, Math.min(block.length, BIG - at), at)
    }
    Fs.closeSync(fd)
  }
  for (let i = 0; i < SMALL_COUNT; i++) {
    const p = Path.join(WWW, "small", smallName(i))
    if (!Fs.existsSync(p)) Fs.writeFileSync(p, Crypto.randomBytes(SMALL_SIZE))
  }
  // Left by a run with more small files: rclone copies the whole folder.
  for (const name of Fs.readdirSync(Path.join(WWW, "small"))) {
    if (!(Number.parseInt(name, 10) < SMALL_COUNT)) Fs.rmSync(Path.join(WWW, "small", name))
  }
  Fs.chmodSync(DIR, 0o755)
}

const hashFile = (path: string): string => {
  const h = Crypto.createHash("sha256")
  const fd = Fs.openSync(path, "r")
  const buf = Buffer.allocUnsafe(8 * 1024 * 1024)
  for (let n = Fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = Fs.readSync(fd, buf, 0, buf.length, null)) {
    h.update(buf.subarray(0, n))
  }
  Fs.closeSync(fd)
  return h.digest("hex")
}

const navigatorCpus = () => (typeof navigator === "undefined" ? "?" : navigator.hardwareConcurrency)

await main().catch((e: unknown) => {
  // A setup problem is one line; anything else keeps its stack, for whoever runs the bench.
  if (!(e instanceof BenchSetupError)) throw e
  process.stderr.write(`bench: ${e.message}\n`)
  process.exit(1)
})
