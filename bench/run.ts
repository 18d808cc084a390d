/**
 * `npm run bench` — dlsync's transfer engine against curl, aria2c and rclone, side by
 * side in one run, all reading the same bytes from one nginx on a loopback port.
 *
 *   node bench/run.ts [--runs 3] [--only big|small|resume|memory] [--size-mib 2048] [--small 2000]
 *                     [--profile DIR] [--split-links] [--verbose]
 * Diagnostics: `--profile DIR` has dlsync's runner write a V8 CPU profile per run into DIR;
 * `--split-links` has it ask for every link first and report that phase apart (its own
 * `links` line, shown with `--verbose`) from the transfers; `--verbose` prints the runner's
 * own output.
 *
 * dlsync takes its links from its own service emulator (in its own process), whose links
 * point at the nginx (`--cdn-base`), and runs bundled as the CLI ships.
 * Rounds alternate the tools (A B A B …) so page-cache drift hits all alike; each figure
 * is the median of the rounds with min–max, and each ratio is computed pair by pair within
 * a round. Data lives under /tmp/dlsync-bench (generated once, reused). See bench/README.md.
 * `--only memory` (also part of a full run, last) is bench/memory.ts: the daemon's RSS.
 */
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import type { DlsyncJob } from "./support/dlsyncRun.ts"
import {
  bundleRunner,
  emulatorJson,
  ensureTools,
  fmt,
  freePort,
  type Measured,
  measure,
  processCpuSeconds,
  startNginx,
  stats,
  syncDisks,
  table,
  which
} from "./support/tools.ts"

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    only: { type: "string" },
    "size-mib": { type: "string", default: "2048" },
    small: { type: "string", default: "2000" },
    profile: { type: "string" },
    "split-links": { type: "boolean", default: false },
    verbose: { type: "boolean", default: false }
  }
})
const RUNS = Math.max(1, Number(args.runs))
const BIG = Number(args["size-mib"]) * 1024 * 1024
const SMALL_COUNT = Number(args.small)
const SMALL_SIZE = 64 * 1024
const DIR = "/tmp/dlsync-bench"
const WWW = Path.join(DIR, "www")
/** `<file id>` → the file in www: what nginx serves at the emulator's link paths. */
const IDS = Path.join(DIR, "ids")
const OUT = Path.join(DIR, "out")
const STATE = Path.join(DIR, "state")
const NODE = process.execPath
const ROOT = Path.resolve(import.meta.dirname, "..")
/** dlsync's runner, bundled as the CLI ships (bundleRunner in support/tools.ts), once per bench run. */
const RUNNER = Path.join(DIR, "runner", "dlsyncRun.mjs")

const main = async () => {
  if (args.only === "memory") return memory()
  ensureTools()
  prepareData()
  await bundleRunner(Path.join(import.meta.dirname, "support", "dlsyncRun.ts"), Path.dirname(RUNNER))
  const port = await freePort()
  const nginx = await startNginx(DIR, port)
  const cdn = `http://127.0.0.1:${port}`
  let emulator: ChildProcess.ChildProcess | undefined
  try {
    const started = await startEmulator(cdn)
    emulator = started.child
    const ctx: Ctx = {
      cdn,
      api: started.api,
      emulatorPid: started.child.pid ?? 0,
      ...(await addLibrary(started.controlUrl))
    }
    Fs.writeFileSync(Path.join(DIR, "rclone.conf"), "")
    console.log(`dlsync transfer benchmark — ${new Date().toISOString()} — ${RUNS} rounds, nproc ${navigatorCpus()}`)
    console.log("Absolute figures on a shared 2-core machine are noisy; the within-round ratios are what count.\n")
    if (args.only === undefined || args.only === "big") big(ctx)
    if (args.only === undefined || args.only === "small") small(ctx)
    if (args.only === undefined || args.only === "resume") await resume(ctx)
  } finally {
    emulator?.kill("SIGTERM")
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

interface Ctx {
  readonly cdn: string
  /** The service emulator's process: its CPU shares the cores with dlsync's. */
  readonly emulatorPid: number
  readonly api: DlsyncJob["api"]
  readonly big: RemoteFile
  readonly small: ReadonlyArray<RemoteFile>
}

// --- one 2 GiB file ------------------------------------------------------------------------

const big = (ctx: Ctx) => {
  const tools: Record<string, () => Measured> = {
    "dlsync single": () => dlsync(ctx, [ctx.big], { segments: 1 }),
    "rclone copyurl": () =>
      peer("rclone", ["copyurl", ...rcloneFlags(), `${ctx.cdn}/big.bin`, Path.join(OUT, "big.bin")]),
    "dlsync segmented": () => dlsync(ctx, [ctx.big], { segments: 4 }),
    "dlsync segm. 16 MiB batches": () => dlsync(ctx, [ctx.big], { segments: 4, durabilityBytes: 16 * 1024 * 1024 }),
    "dlsync segm. no fsync (diag.)": () => dlsync(ctx, [ctx.big], { segments: 4 }, { noFsync: true }),
    "rclone 4 streams": () =>
      peer("rclone", [
        "copy",
        ...rcloneFlags(),
        "--http-url",
        `${ctx.cdn}/`,
        "--multi-thread-streams",
        "4",
        "--multi-thread-cutoff",
        "64M",
        ":http:big.bin",
        OUT
      ]),
    "curl -o": () => peer("curl", ["-sS", "-o", Path.join(OUT, "big.bin"), `${ctx.cdn}/big.bin`]),
    "aria2c -x4 -s4": () =>
      peer("aria2c", [
        "-q",
        "-x4",
        "-s4",
        "-k1M",
        "--file-allocation=falloc",
        "--allow-overwrite=true",
        "-d",
        OUT,
        "-o",
        "big.bin",
        `${ctx.cdn}/big.bin`
      ])
  }
  const results = rounds(tools, () => {
    const size =
      Fs.statSync(Path.join(OUT, "out", "big.bin"), { throwIfNoEntry: false })?.size ??
      Fs.statSync(Path.join(OUT, "big.bin")).size
    if (size !== BIG) throw new Error(`wrong size ${size}`)
  })
  verifyBigOnce(ctx)
  const gib = BIG / 2 ** 30
  const mbps = (m: Measured) => BIG / m.seconds / 1e6
  console.log(`One ${(BIG / 2 ** 20).toFixed(0)} MiB file — MB/s, CPU s/GiB, peak RSS MB: median (min–max)`)
  table(
    ["tool", "MB/s", "CPU s/GiB", "RSS MB"],
    Object.entries(results).map(([name, ms]) => [
      name,
      fmt(stats(ms.map(mbps))),
      fmt(stats(ms.map((m) => m.cpuSeconds / gib)), 2),
      fmt(stats(ms.map((m) => m.maxRssMB)))
    ])
  )
  const ratio = (a: string, b: string, f: (m: Measured) => number, goal: string) => {
    const ra = results[a] ?? []
    const rb = results[b] ?? []
    const rs = ra.map((m, i) => f(m) / f(rb[i] ?? m))
    return [`${a} / ${b}`, fmt(stats(rs), 2), goal]
  }
  const cpu = (m: Measured) => m.cpuSeconds
  console.log("\nRatios, pair by pair within a round: median (min–max)")
  table(
    ["pair", "ratio", "goal"],
    [
      ratio("dlsync single", "rclone copyurl", mbps, "speed ≥ 1.0"),
      ratio("dlsync segmented", "rclone 4 streams", mbps, "speed ≥ 1.0"),
      ratio("dlsync segmented", "curl -o", mbps, "speed ≥ 1.5"),
      ratio("dlsync segmented", "aria2c -x4 -s4", mbps, "speed (info)"),
      ratio("dlsync single", "rclone copyurl", cpu, "CPU ≤ 1.5"),
      ratio("dlsync segmented", "rclone 4 streams", cpu, "CPU ≤ 1.5")
    ]
  )
  console.log("")
}

// --- 2,000 files of 64 KiB ---------------------------------------------------------------------

const FLOOR = "Node floor, same steps (diag.)"
const FLOOR_NO_LINKS = "Node floor, no links (diag.)"

const small = (ctx: Ctx) => {
  const rcloneSmall = (transfers: string) => () =>
    peer("rclone", [
      "copy",
      ...rcloneFlags(),
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
  console.log(`${SMALL_COUNT} files of 64 KiB — files/s, CPU s, peak RSS MB: median (min–max)`)
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

// --- resume after SIGKILL at 50 % --------------------------------------------------------------------

const resume = async (ctx: Ctx) => {
  const fetchedAgain: Array<number> = []
  const notDurable: Array<number> = []
  for (let round = 0; round < RUNS; round++) {
    cleanOut()
    const logBefore = Fs.statSync(Path.join(DIR, "access.log")).size
    const job = dlsyncJob(ctx, [ctx.big], { segments: 4 }, true)
    const child = ChildProcess.spawn(NODE, [RUNNER, JSON.stringify(job)], { stdio: ["ignore", "pipe", "inherit"] })
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
      ChildProcess.execFileSync(NODE, [RUNNER, JSON.stringify({ ...job, progress: false })], { encoding: "utf8" })
        .trim()
        .split("\n")
        .pop() ?? "{}"
    )
    if (second.failed?.length > 0) throw new Error(`resume failed: ${second.failed}`)
    // nginx logs a request when it ends, the killed ones included; with the URI as rewritten
    // from the link's /dl/<id>/<name>.
    await new Promise((r) => setTimeout(r, 300))
    const log = Fs.readFileSync(Path.join(DIR, "access.log"), "utf8").slice(logBefore)
    const sent = log
      .split("\n")
      .filter((l) => l.startsWith(`/${ctx.big.id} `))
      .reduce((n, l) => n + Number(l.split(" ")[2] ?? 0), 0)
    fetchedAgain.push((sent - BIG) / BIG)
    // Written by the killed run but not durable, so written again: what the restart fetched
    // beyond what was missing at the kill (progress is printed every 20 ms: a lower bound).
    notDurable.push((writtenAtKill - (BIG - second.fetched)) / BIG)
    syncDisks()
  }
  console.log("Resume: SIGKILL at 50 % of the big file (segmented), then restart")
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
const rounds = (tools: Record<string, () => Measured>, check: () => void): Record<string, Array<Measured>> => {
  const out: Record<string, Array<Measured>> = {}
  for (let round = 0; round < RUNS; round++) {
    for (const [name, run] of Object.entries(tools)) {
      cleanOut()
      syncDisks()
      const m = run()
      check()
      const list = out[name] ?? []
      list.push(m)
      out[name] = list
      process.stderr.write(`  round ${round + 1} ${name}: ${m.seconds.toFixed(2)} s\n`)
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
    cdn: ctx.cdn
  })

/** A Node process that measures itself (startup excluded) and prints its figures as its last line. */
const measuredInside = (ctx: Ctx, argv: ReadonlyArray<string>, job: DlsyncJob & Record<string, unknown>): Measured => {
  const serviceCpu0 = processCpuSeconds(ctx.emulatorPid)
  const out = ChildProcess.execFileSync(NODE, [...argv, JSON.stringify(job)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  const r: Measured & { failed: Array<string> } = JSON.parse(out.trim().split("\n").pop() ?? "{}")
  if (args.verbose === true) console.log(out.trim())
  if (r.failed.length > 0)
    throw new Error(`${Path.basename(argv.at(-1) ?? "")} failed: ${r.failed.slice(0, 3).join("; ")}`)
  return { ...r, serviceCpuSeconds: processCpuSeconds(ctx.emulatorPid) - serviceCpu0 }
}

const profileFlags = () => (args.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", args.profile])

const peer = (tool: string, args: ReadonlyArray<string>): Measured => measure(which(tool) ?? tool, args)

const rcloneFlags = () => ["--config", Path.join(DIR, "rclone.conf"), "-q"]

const cleanOut = () => {
  Fs.rmSync(OUT, { recursive: true, force: true })
  Fs.rmSync(STATE, { recursive: true, force: true })
  Fs.mkdirSync(OUT, { recursive: true })
}

const smallName = (i: number) => `${String(i).padStart(4, "0")}.bin`

/**
 * Starts `dlsync emulator` in its own process (its CPU is not dlsync's), with an empty
 * library, the control API, and links pointing at nginx; returns what `--json` printed.
 */
const startEmulator = (cdn: string) =>
  new Promise<{ child: ChildProcess.ChildProcess; api: DlsyncJob["api"]; controlUrl: string }>((resolve, reject) => {
    const child = ChildProcess.spawn(
      NODE,
      [
        Path.join(ROOT, "bin", "dlsync.js"),
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
        IDS
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    emulatorJson<{ base_url: string; auth_url: string; api_key: string; control_url: string }>(child).then(
      (info) =>
        resolve({
          child,
          api: { baseUrl: info.base_url, authUrl: info.auth_url, apiKey: info.api_key },
          controlUrl: info.control_url
        }),
      reject
    )
  })

/**
 * Adds the benchmark's files to the emulator's account through the control API (big.bin
 * and small/NNNN.bin, the sizes of the files in www) and links each id to its file in
 * `ids/`, where nginx and the emulator (`--content-dir`) find the bytes.
 */
const addLibrary = async (controlUrl: string): Promise<Pick<Ctx, "big" | "small">> => {
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
    Fs.symlinkSync(Path.join("..", "www", path), Path.join(IDS, id))
    return { id, path, size }
  }
  Fs.rmSync(IDS, { recursive: true, force: true })
  Fs.mkdirSync(IDS)
  const big = await file("big.bin", null, "big.bin", BIG)
  const folder = await add({ type: "folder", name: "small" })
  const small: Array<RemoteFile> = []
  for (let i = 0; i < SMALL_COUNT; i++) {
    small.push(await file(smallName(i), folder, `small/${smallName(i)}`, SMALL_SIZE))
  }
  return { big, small }
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

/** A full byte comparison of one dlsync segmented result against the source. */
const verifyBigOnce = (ctx: Ctx) => {
  cleanOut()
  dlsync(ctx, [ctx.big], { segments: 4 })
  const a = hashFile(Path.join(WWW, "big.bin"))
  const b = hashFile(Path.join(OUT, "out", "big.bin"))
  if (a !== b) throw new Error("dlsync's copy of big.bin differs from the source")
  console.log("verified: dlsync's segmented copy is byte-identical (sha256)\n")
  cleanOut()
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

await main()
