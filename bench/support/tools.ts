/**
 * Benchmark plumbing: the peer tools (installed from Debian on demand), an nginx of our
 * own on a loopback port, process measurement (wall, CPU, peak RSS through getrusage of
 * the child), and medians.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { bundle } from "../../scripts/build.ts"

export const TOOLS = ["nginx", "curl", "aria2c", "rclone"] as const

/** Installs nginx, curl, aria2 and rclone from Debian's packages when one is missing. */
export const ensureTools = (): void => {
  const missing = TOOLS.filter((t) => which(t) === undefined)
  if (missing.length === 0) return
  console.log(`installing ${missing.join(", ")} (apt-get)…`)
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  ChildProcess.execSync("apt-get update -qq", { stdio: "inherit", env })
  ChildProcess.execSync("apt-get install -y -qq nginx curl aria2 rclone", { stdio: "inherit", env })
}

export const which = (tool: string): string | undefined => {
  for (const dir of ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/sbin", "/bin"]) {
    const p = Path.join(dir, tool)
    if (Fs.existsSync(p)) return p
  }
  return undefined
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = Net.createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = address !== null && typeof address === "object" ? address.port : 0
      s.close(() => resolve(port))
    })
  })

/**
 * Starts nginx in the foreground on `port`, logging body bytes per request. It serves
 * `dir/www` by name (for the peers) and `dir/ids/<file id>` at the emulator's link paths
 * `/dl/<file id>/<name>` (for dlsync; see src/emulator/README.md, `--cdn-base`).
 */
export const startNginx = async (dir: string, port: number): Promise<ChildProcess.ChildProcess> => {
  const conf = Path.join(dir, "nginx.conf")
  Fs.writeFileSync(
    conf,
    `worker_processes 2;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 1024; }
http {
  log_format bytes '$uri $status $body_bytes_sent';
  access_log ${dir}/access.log bytes;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  keepalive_timeout 60s;
  client_body_temp_path ${dir}/tmp;
  proxy_temp_path ${dir}/tmp;
  fastcgi_temp_path ${dir}/tmp;
  uwsgi_temp_path ${dir}/tmp;
  scgi_temp_path ${dir}/tmp;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/www;
    autoindex on;
    location /dl/ { rewrite ^/dl/([^/]+)/ /$1 break; root ${dir}/ids; }
  }
}
`
  )
  Fs.mkdirSync(Path.join(dir, "tmp"), { recursive: true })
  const nginx = ChildProcess.spawn(which("nginx") ?? "nginx", ["-p", `${dir}/`, "-c", conf, "-g", "daemon off;"], {
    stdio: "inherit"
  })
  for (let i = 0; i < 100; i++) {
    if (await canConnect(port)) return nginx
    await new Promise((r) => setTimeout(r, 50))
  }
  nginx.kill("SIGKILL")
  throw new Error("nginx did not start")
}

export interface Measured {
  readonly seconds: number
  readonly cpuSeconds: number
  readonly maxRssMB: number
  /** dlsync only: CPU the service emulator spent meanwhile (answering link requests) on the same cores. */
  readonly serviceCpuSeconds?: number
}

/** User + system CPU seconds a live process has used so far (Linux /proc). */
export const processCpuSeconds = (pid: number): number => {
  const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** USER_HZ: Linux reports process times in hundredths of a second. */
const CLOCK_TICKS = 100

/**
 * Runs a command to completion and measures it from outside: wall time, user+system CPU
 * and peak RSS of the process tree's largest member (getrusage(RUSAGE_CHILDREN) in a tiny
 * Python wrapper, since Node cannot read a child's rusage).
 */
export const measure = (command: string, args: ReadonlyArray<string>): Measured => {
  const wrapper = `
import json, resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
e = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": r.returncode, "seconds": e, "cpu": u.ru_utime + u.ru_stime, "rss": u.ru_maxrss}))
`
  const out = ChildProcess.execFileSync("python3", ["-c", wrapper, command, ...args], { encoding: "utf8" })
  const r: { code: number; seconds: number; cpu: number; rss: number } = JSON.parse(
    out.trim().split("\n").pop() ?? "{}"
  )
  if (r.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.code}`)
  return { seconds: r.seconds, cpuSeconds: r.cpu, maxRssMB: r.rss / 1024 }
}

export interface Stats {
  readonly median: number
  readonly min: number
  readonly max: number
}

export const stats = (values: ReadonlyArray<number>): Stats => {
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  const median = s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2
  return { median, min: s[0] ?? 0, max: s[s.length - 1] ?? 0 }
}

export const fmt = (s: Stats, digits = 0): string =>
  `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`

/** Prints a table of text cells, each column as wide as its widest cell. */
export const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): void => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ")
  console.log(line(head))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const r of rows) console.log(line(r))
}

/**
 * The line a `dlsync emulator --json` process prints first, parsed. Keeps reading stdout to
 * the end, so the emulator never blocks on a full pipe.
 */
export const emulatorJson = <A>(child: ChildProcess.ChildProcess): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    let out = ""
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
      const line = out.split("\n")[0]
      if (out.includes("\n") && line !== undefined) resolve(JSON.parse(line))
    })
    child.on("exit", (code) => reject(new Error(`emulator exited with ${code}`)))
  })

/** Flushes dirty pages so one run's writeback does not slow the next. */
export const syncDisks = (): void => {
  ChildProcess.execSync("sync")
}

// ---------------------------------------------------------------------------------------

const canConnect = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = Net.connect(port, "127.0.0.1")
    s.once("connect", () => {
      s.destroy()
      resolve(true)
    })
    s.once("error", () => resolve(false))
  })

/**
 * Bundles a benchmark runner as the CLI ships (scripts/build.ts) into `dir` (emptied first),
 * beside a link to the project's node_modules, through which the external better-sqlite3
 * resolves. Returns the bundle's path.
 */
export const bundleRunner = async (entry: string, dir: string): Promise<string> => {
  Fs.rmSync(dir, { recursive: true, force: true })
  Fs.mkdirSync(dir, { recursive: true })
  Fs.symlinkSync(Path.resolve(import.meta.dirname, "..", "..", "node_modules"), Path.join(dir, "node_modules"))
  const outfile = Path.join(dir, `${Path.basename(entry, ".ts")}.mjs`)
  await bundle(entry, outfile)
  return outfile
}
