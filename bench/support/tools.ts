/**
 * Benchmark plumbing: the peer tools (installed from Debian on demand), a certificate made
 * at setup, an nginx of our own on loopback ports (https or http, one of them capped per
 * connection), the dlsync CLI installed as `npm ci` installs it, process measurement (wall,
 * CPU, peak RSS through getrusage of the child), and medians.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { bundle } from "../../scripts/build.ts"

/** A setup problem: run.ts prints its message as one line and exits 1, no stack. */
export class BenchSetupError extends Error {}

/** Each tool the benchmark runs, and the Debian package it comes from. */
export const TOOLS = {
  nginx: "nginx",
  curl: "curl",
  aria2c: "aria2",
  rclone: "rclone",
  openssl: "openssl",
  taskset: "util-linux",
  /** measure()'s wrapper: Node cannot read a child's rusage. */
  python3: "python3"
} as const

/** Installs the tools' Debian packages when one is missing; one line naming what is missing if that fails. */
export const ensureTools = (): void => {
  const missing = () => Object.keys(TOOLS).filter((t) => which(t) === undefined) as Array<keyof typeof TOOLS>
  const before = missing()
  if (before.length === 0) return
  const packages = [...new Set(before.map((t) => TOOLS[t]))].join(" ")
  console.log(`installing ${packages} (apt-get)…`)
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  try {
    ChildProcess.execSync("apt-get update -qq", { stdio: "ignore", env })
    ChildProcess.execSync(`apt-get install -y -qq ${packages}`, { stdio: "ignore", env })
  } catch {
    // Reported below in one line, by what is still missing; apt-get run by hand says why.
  }
  const still = missing()
  if (still.length > 0) {
    throw new BenchSetupError(
      `${still.join(", ")} not installed and apt-get could not install it; run \`apt-get install ${[...new Set(still.map((t) => TOOLS[t]))].join(" ")}\` as root`
    )
  }
}

/**
 * A self-signed certificate for 127.0.0.1 (subjectAltName IP:127.0.0.1), made with openssl
 * at setup, valid two days. dlsync trusts it through NODE_EXTRA_CA_CERTS, each peer through
 * its own option.
 */
export const makeCertificate = (dir: string): { readonly cert: string; readonly key: string } => {
  const cert = Path.join(dir, "bench.crt")
  const key = Path.join(dir, "bench.key")
  try {
    ChildProcess.execFileSync(
      which("openssl") ?? "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        key,
        "-out",
        cert
      ],
      { stdio: ["ignore", "ignore", "pipe"] }
    )
  } catch (e) {
    const stderr = String((e as { stderr?: unknown }).stderr ?? (e as Error).message)
      .trim()
      .split("\n")[0]
    throw new BenchSetupError(`openssl could not make the benchmark's certificate: ${stderr}`)
  }
  return { cert, key }
}

export const which = (tool: string): string | undefined => {
  // nginx lives in sbin, often not on a user's PATH.
  const path = (process.env.PATH ?? "").split(":").filter((d) => d !== "")
  for (const dir of ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/sbin", "/bin", ...path]) {
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

export interface NginxSetup {
  readonly dir: string
  /** The uncapped port, and one whose every connection is capped at `cappedRate` (nginx limit_rate). */
  readonly port: number
  readonly cappedPort: number
  readonly cappedRate: string
  /** https with this certificate; plain http when undefined. */
  readonly tls: { readonly cert: string; readonly key: string } | undefined
  /**
   * Paths forwarded (on the uncapped port) to a plain-http port on 127.0.0.1, streamed as they
   * come (no buffering): an emulator's ZIP archives, which nginx cannot build itself.
   */
  readonly proxies?: ReadonlyArray<{ readonly path: string; readonly port: number; readonly to: string }>
}

/**
 * Starts nginx in the foreground, logging body bytes per request, on two loopback ports:
 * `port`, and `cappedPort` with every connection capped at `cappedRate`. Both serve
 * `dir/www` by name (for the peers) and, for dlsync, `dir/ids/<tag>/<file id>` at
 * `/e/<tag>/dl/<file id>/<name>`: the links of an emulator started with
 * `--cdn-base <origin>/e/<tag>` (see src/emulator/README.md); each emulator has its own tag,
 * since their file ids repeat. A port already taken, or any other start failure, is one line.
 */
export const startNginx = async (setup: NginxSetup): Promise<ChildProcess.ChildProcess> => {
  const { dir, port, cappedPort, cappedRate, tls, proxies = [] } = setup
  const conf = Path.join(dir, "nginx.conf")
  const listen = (p: number) => `listen 127.0.0.1:${p}${tls === undefined ? "" : " ssl"};`
  const ssl =
    tls === undefined
      ? ""
      : `ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    ssl_protocols TLSv1.3;`
  const server = (p: number, extra: string) => `  server {
    ${listen(p)}
    ${ssl}
    ${extra}
    root ${dir}/www;
    autoindex on;
    location /e/ { rewrite ^/e/([^/]+)/dl/([^/]+)/ /$1/$2 break; root ${dir}/ids; }
  }
`
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
${server(
  port,
  proxies
    .map(
      (p) =>
        `location ${p.path} { proxy_pass http://127.0.0.1:${p.port}${p.to}; proxy_buffering off; proxy_http_version 1.1; }`
    )
    .join("\n    ")
)}${server(cappedPort, `limit_rate ${cappedRate};`)}}
`
  )
  Fs.mkdirSync(Path.join(dir, "tmp"), { recursive: true })
  for (const p of [port, cappedPort]) {
    if (await canConnect(p)) throw new BenchSetupError(`127.0.0.1:${p} is already in use; stop what listens there`)
  }
  const nginx = ChildProcess.spawn(which("nginx") ?? "nginx", ["-p", `${dir}/`, "-c", conf, "-g", "daemon off;"], {
    stdio: ["ignore", "inherit", "pipe"]
  })
  let stderr = ""
  // Kept for the one line that says why it did not start.
  nginx.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString()
  })
  let exited = false
  nginx.once("exit", () => {
    exited = true
  })
  for (let i = 0; i < 100 && !exited; i++) {
    if ((await canConnect(port)) && (await canConnect(cappedPort)) && !exited) return nginx
    await new Promise((r) => setTimeout(r, 50))
  }
  nginx.kill("SIGKILL")
  const why = (stderr.trim().split("\n").at(-1) ?? "").replace(/^nginx: /, "")
  throw new BenchSetupError(
    `nginx could not start on 127.0.0.1:${port} and :${cappedPort}: ${why === "" ? "it did not answer within 5 s" : why}`
  )
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
 * Python wrapper, since Node cannot read a child's rusage). `env` is the command's whole
 * environment (default: this process's).
 *
 * The CPU is what the children used after the wrapper began: a `python3` that is a launcher
 * script (pyenv's shim) runs helper processes and then becomes Python, and their CPU is already
 * in its RUSAGE_CHILDREN (0.27 s on this machine, added to every row until session 12). The peak
 * RSS has a floor of the wrapper's own, ≈ 12 MB: a child counts its size before it `exec`s.
 */
export const measure = (
  command: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env
): Measured => {
  const wrapper = `
import json, resource, subprocess, sys, time
b = resource.getrusage(resource.RUSAGE_CHILDREN)
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
e = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = u.ru_utime + u.ru_stime - b.ru_utime - b.ru_stime
print(json.dumps({"code": r.returncode, "seconds": e, "cpu": cpu, "rss": u.ru_maxrss}))
`
  const out = ChildProcess.execFileSync("python3", ["-c", wrapper, command, ...args], { encoding: "utf8", env })
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

const ROOT = Path.resolve(import.meta.dirname, "..", "..")

/**
 * The dlsync CLI installed in `dir` as `npm ci` installs it: the launcher bin/dlsync.js
 * beside the bundle dist/dlsync.mjs (built from `entry`, src/main.ts unless given, by
 * scripts/build.ts) and package.json, with a link to the project's node_modules. Returns the
 * launcher's path.
 */
export const installCli = async (dir: string, entry = Path.join(ROOT, "src", "main.ts")): Promise<string> => {
  Fs.rmSync(dir, { recursive: true, force: true })
  Fs.mkdirSync(Path.join(dir, "bin"), { recursive: true })
  Fs.copyFileSync(Path.join(ROOT, "bin", "dlsync.js"), Path.join(dir, "bin", "dlsync.js"))
  Fs.copyFileSync(Path.join(ROOT, "package.json"), Path.join(dir, "package.json"))
  Fs.symlinkSync(Path.join(ROOT, "node_modules"), Path.join(dir, "node_modules"))
  await bundle(entry, Path.join(dir, "dist", "dlsync.mjs"))
  return Path.join(dir, "bin", "dlsync.js")
}

/**
 * Bundles a benchmark runner as the CLI ships (scripts/build.ts) into `dir` (emptied first),
 * beside a link to the project's node_modules, through which the external better-sqlite3
 * resolves. Returns the bundle's path.
 */
export const bundleRunner = async (entry: string, dir: string): Promise<string> => {
  Fs.rmSync(dir, { recursive: true, force: true })
  Fs.mkdirSync(dir, { recursive: true })
  Fs.symlinkSync(Path.join(ROOT, "node_modules"), Path.join(dir, "node_modules"))
  const outfile = Path.join(dir, `${Path.basename(entry, ".ts")}.mjs`)
  await bundle(entry, outfile)
  return outfile
}
