/**
 * `node bench/hostile.ts`: what hostile requests do to the real daemon, measured from
 * outside. The `dlsync run` process, installed as `npm ci` installs it (bin/dlsync.js beside
 * the bundle), runs against `dlsync emulator` in its own process, with the status server,
 * the qBittorrent API and the SABnzbd API on loopback ports. Each attack comes from this
 * process over raw TCP, again and again for ATTACK_SECONDS (a round at most every ROUND_MS),
 * while another process (support/watchDaemon.ts) asks /healthz every 25 ms and reads the
 * daemon's RSS from /proc every 10 ms:
 *
 *   0. nothing: the noise of a shared machine, to read the rows below against
 *   1. SABnzbd: a 63 MB `a=&a=&…` POST without the API key (its length declared, then chunked)
 *   2. qBittorrent: 8 parallel auth/login POSTs of 32 MB (declared, then chunked)
 *   3. 500 idle connections from one address (the health check's own) to the status server
 *
 * For each: what the attacker got and how much it had sent by then, the event loop's worst
 * lag and p99 over the attack (/metrics' nodejs_eventloop_lag_*, whose window starts at the
 * scrape just before the attack), the RSS growth (peak during the attack − before), the CPU
 * time the daemon spent meanwhile (little CPU with a large lag: the machine's other work held
 * it back, not the attack) and /healthz's latency meanwhile. Goals (issue 33): lag ≤ 100 ms,
 * RSS growth ≤ 50 MB, /healthz answering in < 100 ms throughout. With taskset, the daemon runs on CPU 0 and everything
 * else (this process, the watcher, the emulator) on CPU 1, so that the attacker's CPU is not
 * counted as the daemon's lag; other work on the machine still is (row 0 shows how much).
 *
 *   node bench/hostile.ts [--dir /tmp/dlsync-bench-hostile]
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { availableParallelism } from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { emulatorJson, freePort, installCli, table, which } from "./support/tools.ts"

const { values: args } = parseArgs({
  options: { dir: { type: "string", default: "/tmp/dlsync-bench-hostile" } },
  strict: false
})
const DIR = String(args.dir)
const NODE = process.execPath
const WATCH = Path.join(import.meta.dirname, "support", "watchDaemon.ts")
const LOAD = Path.join(import.meta.dirname, "support", "httpLoad.ts")
const MB = 1024 * 1024
const API_KEY = "0123456789abcdef0123456789abcdef"
/** How long each attack goes on. */
const ATTACK_SECONDS = 5
/** An attack's rounds start at most this often. */
const ROUND_MS = 200

interface Origins {
  readonly health: string
  readonly qbittorrent: string
  readonly sabnzbd: string
}

interface Attack {
  readonly name: string
  /** Runs the attack; what the attacker saw. */
  readonly run: (origins: Origins) => Promise<string>
}

const ATTACKS: ReadonlyArray<Attack> = [
  {
    // What the other work on this machine alone does to the figures.
    name: `nothing, ${ATTACK_SECONDS} s (the machine's noise)`,
    run: () => sleep(ATTACK_SECONDS * 1000).then(() => "-")
  },
  {
    name: "SABnzbd: 63 MB a=&a=& POST, no key, length declared",
    run: (o) => rounds(() => [flood(o.sabnzbd, "/api?mode=addurl&output=json", 63 * MB, "a=&", false)])
  },
  {
    name: "SABnzbd: 63 MB a=&a=& POST, no key, chunked",
    run: (o) => rounds(() => [flood(o.sabnzbd, "/api?mode=addurl&output=json", 63 * MB, "a=&", true)])
  },
  {
    name: "qBittorrent: 8 parallel 32 MB logins, length declared",
    run: (o) => rounds(() => Array.from({ length: 8 }, () => flood(o.qbittorrent, LOGIN, 32 * MB, "a", false)))
  },
  {
    name: "qBittorrent: 8 parallel 32 MB logins, chunked",
    run: (o) => rounds(() => Array.from({ length: 8 }, () => flood(o.qbittorrent, LOGIN, 32 * MB, "a", true)))
  },
  {
    name: `status server: 500 idle connections from the health check's address, ${ATTACK_SECONDS} s`,
    run: async (o) => {
      const r = JSON.parse(
        ChildProcess.execFileSync(NODE, [LOAD, "idle", o.health, "500", String(ATTACK_SECONDS * 1000)], {
          encoding: "utf8"
        }).trim()
      )
      return `${r.opened} opened, ${r.refused} refused, ${r.closedByServer} closed by the daemon`
    }
  }
]

export const main = async () => {
  Fs.rmSync(DIR, { recursive: true, force: true })
  const root = Path.join(DIR, "root")
  Fs.mkdirSync(root, { recursive: true })
  const cli = await installCli(Path.join(DIR, "cli"))
  const pin = pinning()
  const emulator = ChildProcess.spawn(
    ...pin("1", [NODE, cli, "emulator", "--port", "0", "--json", "--library", "empty"]),
    {
      stdio: ["ignore", "pipe", "inherit"]
    }
  )
  const info = await emulatorJson<{ readonly base_url: string; readonly access_token: string }>(emulator)
  const [health, qbittorrent, sabnzbd] = [await freePort(), await freePort(), await freePort()]
  const origins: Origins = {
    health: `http://127.0.0.1:${health}`,
    qbittorrent: `http://127.0.0.1:${qbittorrent}`,
    sabnzbd: `http://127.0.0.1:${sabnzbd}`
  }
  const daemon = ChildProcess.spawn(...pin("0", [NODE, cli, "run"]), {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: DIR,
      XDG_CONFIG_HOME: Path.join(DIR, "config"),
      NO_COLOR: "1",
      DLSYNC_SERVICE_BASE_URL: info.base_url,
      DLSYNC_SERVICE_API_KEY: info.access_token,
      DLSYNC_MIRROR_ROOT: root,
      DLSYNC_MIRROR_STATE_DIR: Path.join(DIR, "state"),
      DLSYNC_TRANSFERS_MIN_FREE_SPACE: "0",
      DLSYNC_SERVER_LISTEN: `127.0.0.1:${health}`,
      DLSYNC_QBITTORRENT_LISTEN: `127.0.0.1:${qbittorrent}`,
      DLSYNC_QBITTORRENT_USERNAME: "arr",
      DLSYNC_QBITTORRENT_PASSWORD: "a long random text",
      DLSYNC_SABNZBD_LISTEN: `127.0.0.1:${sabnzbd}`,
      DLSYNC_SABNZBD_API_KEY: API_KEY,
      DLSYNC_LOG_LEVEL: "error"
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  // taskset execs the command: the pid is the daemon's.
  const pid = daemon.pid ?? 0
  try {
    console.log(`dlsync hostile-input benchmark — ${new Date().toISOString()} — the \`dlsync run\` process`)
    console.log("A shared 2-core machine: RSS is barely affected by other work, lags and latencies are.\n")
    const deadline = performance.now() + 60_000
    while ((await fetch(`${origins.health}/readyz`).catch(() => undefined))?.status !== 200) {
      if (performance.now() > deadline) throw new Error("timed out waiting for the daemon to be ready")
      await sleep(250)
    }
    await sleep(2_000)
    const rows: Array<ReadonlyArray<string>> = []
    const met: Array<boolean> = []
    for (const attack of ATTACKS) {
      const watch = ChildProcess.spawn(...pin("1", [NODE, WATCH, origins.health, String(pid)]), {
        stdio: ["pipe", "pipe", "inherit"]
      })
      const watching = watchOutput(watch)
      await watching.started
      // The lag window starts here.
      await scrape(origins.health)
      const before = rssBytes(pid)
      const cpuBefore = cpuSeconds(pid)
      // The monitor's first interval of a window only starts it (src/server/eventLoopLag.ts).
      await sleep(100)
      const saw = await attack.run(origins)
      // The daemon's answer to the last probe and whatever the attack left to finish.
      await sleep(300)
      const cpu = cpuSeconds(pid) - cpuBefore
      const watched = await watching.stop()
      const lag = await scrape(origins.health)
      const growthMB = (watched.maxRssBytes - before) / MB
      const latencies = [...watched.latenciesMs].sort((a, b) => a - b)
      const worst = latencies.at(-1) ?? Number.NaN
      met.push(lag.max <= 0.1 && growthMB <= 50 && worst < 100 && watched.failures === 0)
      rows.push([
        attack.name,
        `${(lag.max * 1000).toFixed(0)} ms`,
        `${(lag.p99 * 1000).toFixed(0)} ms`,
        `${growthMB.toFixed(1)} MB`,
        `${cpu.toFixed(2)} s`,
        `${worst.toFixed(1)} ms max, ${(latencies[Math.floor(latencies.length / 2)] ?? Number.NaN).toFixed(1)} median, ${latencies.length} ok, ${watched.failures} failed`,
        saw
      ])
      console.error(`  ${attack.name}: done`)
    }
    console.log("")
    table(["input", "worst lag", "lag p99", "RSS growth", "daemon CPU", "/healthz during it", "the attacker saw"], rows)
    console.log(
      `\nGoals (lag ≤ 100 ms, RSS growth ≤ 50 MB, /healthz < 100 ms, none failing): ${met.every(Boolean) ? "met" : "NOT met"} (${met.map((m) => (m ? "yes" : "NO")).join(", ")})`
    )
  } finally {
    daemon.kill("SIGTERM")
    emulator.kill("SIGTERM")
  }
}

// ---------------------------------------------------------------------------------------

interface Flooded {
  readonly status: string
  readonly sentMB: number
  readonly ofMB: number
}

const LOGIN = "/api/v2/auth/login"

/**
 * `round`'s requests, again for ATTACK_SECONDS (each round once the previous one is answered,
 * at most every ROUND_MS); what the attacker got, summed up.
 */
const rounds = async (round: () => ReadonlyArray<Promise<Flooded>>): Promise<string> => {
  const end = performance.now() + ATTACK_SECONDS * 1000
  const answers: Array<Flooded> = []
  let count = 0
  while (performance.now() < end) {
    const next = performance.now() + ROUND_MS
    answers.push(...(await Promise.all(round())))
    count += 1
    await sleep(Math.max(0, next - performance.now()))
  }
  const statuses = new Map<string, number>()
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
  const sent = Math.max(...answers.map((a) => a.sentMB))
  return `${count} rounds, ${answers.length} requests: ${[...statuses].map(([st, n]) => `${n} × ${st}`).join(", ")}; at most ${sent.toFixed(1)} of ${answers[0]?.ofMB.toFixed(0)} MB sent by then`
}

/**
 * POSTs `size` bytes of `unit` repeated to `path`, as fast as the connection takes them,
 * until all is sent or the server answers; the answer's status line and how much was sent.
 */
const flood = (origin: string, path: string, size: number, unit: string, chunked: boolean) =>
  new Promise<Flooded>((resolve) => {
    const { hostname, port } = new URL(origin)
    const socket = Net.connect(Number(port), hostname)
    const piece = Buffer.from(unit.repeat(Math.floor((256 * 1024) / unit.length)))
    let sent = 0
    let answer = ""
    let done = false
    const finish = (status: string) => {
      if (done) return
      done = true
      socket.destroy()
      resolve({ status, sentMB: sent / MB, ofMB: size / MB })
    }
    socket.on("data", (data: Buffer) => {
      answer += data.toString("latin1")
      const line = answer.split("\r\n")[0] ?? ""
      if (answer.includes("\r\n")) finish(line.replace(/^HTTP\/1\.1 /, ""))
    })
    socket.on("error", () => finish(answer === "" ? "connection reset, no answer" : (answer.split("\r\n")[0] ?? "")))
    socket.on("close", () => finish(answer === "" ? "closed, no answer" : (answer.split("\r\n")[0] ?? "")))
    const framing = chunked ? "transfer-encoding: chunked" : `content-length: ${size}`
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\n${framing}\r\n\r\n`
    )
    const pump = () => {
      while (!done && sent < size) {
        const part = piece.subarray(0, Math.min(piece.length, size - sent))
        sent += part.length
        const more = chunked
          ? socket.write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]))
          : socket.write(part)
        if (!more) return void socket.once("drain", pump)
      }
      if (!done && chunked) socket.write("0\r\n\r\n")
    }
    pump()
  })

/** The watcher's output: `started` once it watches, `stop` for its figures. */
const watchOutput = (watch: ChildProcess.ChildProcess) => {
  let out = ""
  const started = new Promise<void>((resolve) => {
    watch.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
      if (out.startsWith("watching\n")) resolve()
    })
  })
  const stop = () =>
    new Promise<{ latenciesMs: Array<number>; failures: number; maxRssBytes: number }>((resolve, reject) => {
      watch.on("exit", () => {
        try {
          resolve(JSON.parse(out.slice("watching\n".length).trim()))
        } catch (e) {
          reject(e)
        }
      })
      watch.stdin?.end()
    })
  return { started, stop }
}

/** With taskset and two CPUs or more: `argv` run on CPU `cpu`; else `argv` as it is. */
const pinning = () => {
  const taskset = which("taskset")
  const pinned = taskset !== undefined && availableParallelism() >= 2
  if (pinned) ChildProcess.execFileSync(taskset, ["-cp", "1", String(process.pid)], { stdio: "ignore" })
  console.error(pinned ? "  the daemon on CPU 0, the rest on CPU 1" : "  no taskset or one CPU: nothing pinned")
  return (cpu: string, argv: ReadonlyArray<string>): [string, Array<string>] =>
    pinned && taskset !== undefined ? [taskset, ["-c", cpu, ...argv]] : [argv[0] ?? NODE, argv.slice(1)]
}

/** The event loop's lag since the previous scrape, from /metrics (and a new window started). */
const scrape = async (health: string): Promise<{ readonly p99: number; readonly max: number }> => {
  const text = await (await fetch(`${health}/metrics`)).text()
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN)
  return { p99: value("nodejs_eventloop_lag_p99_seconds"), max: value("nodejs_eventloop_lag_max_seconds") }
}

/** The process's user + system CPU seconds, from /proc/PID/stat (clock ticks of 1/100 s). */
const cpuSeconds = (pid: number): number => {
  const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const rssBytes = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN) * 1024

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

if (import.meta.main) await main()
