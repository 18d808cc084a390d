/**
 * The daemon as a service: the real CLI against the emulator with its health endpoint on a
 * free port (/healthz, /readyz, /metrics, /api/status), JSON log lines on stderr with no
 * secret at any level, sd_notify through a stand-in notification socket, and `--once`
 * opening no port.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { parsePrometheusText, sampleValue } from "../server/promText.ts"
import { hasTool, skipWithout } from "../service/systemdTools.ts"
import {
  eventually,
  expectedTree,
  freePort,
  type Sandbox,
  sandbox,
  seedMany,
  seedSmallLibrary,
  snapshot,
  waitUntil
} from "./harness.ts"

let box: Sandbox | undefined
const cleanups: Array<() => void> = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  await box?.close()
  box = undefined
})

describe("the daemon as a service", { timeout: 120_000 }, () => {
  it("serves /healthz, /readyz, /metrics and /api/status, and logs JSON lines without secrets", async () => {
    box = await sandbox()
    const b = box
    seedSmallLibrary(b.emu)
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const daemon = b.spawn(["run"], {
      env: { DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}`, DLSYNC_SYNC_POLL_INTERVAL: "1h", DLSYNC_LOG_LEVEL: "trace" },
      deadlineMs: 90_000
    })

    await eventually(
      async () => (await get(`${origin}/healthz`)).status === 200,
      "/healthz",
      30_000,
      () => daemon.output().stderr.slice(-3000)
    )
    assert.strictEqual((await get(`${origin}/healthz`)).body, "ok\n")
    await eventually(async () => (await get(`${origin}/readyz`)).status === 200, "/readyz after the first poll")
    const ready = JSON.parse((await get(`${origin}/readyz`)).body)
    assert.isTrue(ready.ready)
    assert.isTrue(ready.checks.store.ok && ready.checks.feed.ok && ready.checks.auth.ok)

    await waitUntil(
      () => JSON.stringify(snapshot(b.root)) === JSON.stringify(expectedTree(b.emu)),
      30_000,
      "full mirror"
    )
    const files = Object.values(expectedTree(b.emu)).filter((e) => e.type === "file")
    const totalBytes = files.reduce((n, f) => n + f.size, 0)
    // The files gauge is set when the pass ends, just after the last file lands.
    await eventually(
      async () =>
        metricValue((await get(`${origin}/metrics`)).body, "dlsync_files", { state: "synced" }) === files.length,
      "files gauge after the pass"
    )
    const metrics = await get(`${origin}/metrics`)
    assert.strictEqual(metrics.status, 200)
    assert.include(metrics.headers.get("content-type") ?? "", "text/plain")
    assert.strictEqual(metricValue(metrics.body, "dlsync_transferred_bytes_total", {}), totalBytes)
    assert.isAbove(
      metricValue(metrics.body, "dlsync_api_requests_total", { operation: "GET /files/changes", status: "200" }) ?? 0,
      0
    )
    assert.isAbove(
      metricValue(metrics.body, "dlsync_api_requests_total", {
        operation: "POST /files/{file}/download-link",
        status: "200"
      }) ?? 0,
      0
    )
    assert.isAbove(metricValue(metrics.body, "dlsync_last_sync_success_timestamp_seconds", {}) ?? 0, 0)
    assert.isDefined(metricValue(metrics.body, "dlsync_feed_lag_seconds", {}))
    assert.isDefined(metricValue(metrics.body, "dlsync_transfer_queue_depth", {}))
    // What users watch the daemon with: the process, its passes, each file's outcome, the disk.
    const families = parsePrometheusText(metrics.body)
    const daemonRss =
      Number(/VmRSS:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${daemon.child.pid}/status`, "utf8"))?.[1]) * 1024
    assert.closeTo(sampleValue(families, "process_resident_memory_bytes") ?? 0, daemonRss, 32 * 2 ** 20)
    assert.isAbove(sampleValue(families, "process_cpu_seconds_total") ?? 0, 0)
    // The scrape's own socket and others come and go: close to what /proc lists now.
    assert.closeTo(
      sampleValue(families, "process_open_fds") ?? 0,
      Fs.readdirSync(`/proc/${daemon.child.pid}/fd`).length,
      8
    )
    assert.isAbove(sampleValue(families, "process_max_fds") ?? 0, 0)
    assert.isAbove(sampleValue(families, "process_start_time_seconds") ?? 0, Date.now() / 1000 - 120)
    assert.strictEqual(sampleValue(families, "dlsync_file_transfers_total", { outcome: "landed" }), files.length)
    assert.strictEqual(sampleValue(families, "dlsync_file_transfers_total", { outcome: "failed" }), 0)
    assert.isAtLeast(sampleValue(families, "dlsync_pass_duration_seconds_count") ?? 0, 1)
    assert.isAbove(sampleValue(families, "dlsync_pass_duration_seconds_sum") ?? 0, 0)
    assert.strictEqual(sampleValue(families, "dlsync_held_deletions"), 0)
    const disk = Fs.statfsSync(b.root)
    assert.closeTo(sampleValue(families, "dlsync_root_free_bytes") ?? 0, disk.bavail * disk.bsize, 2 ** 30)
    // Operation labels are route templates, never concrete paths with ids.
    for (const line of metrics.body.split("\n").filter((l) => l.startsWith("dlsync_api_requests_total{"))) {
      assert.match(line, /operation="(GET|POST|PUT|DELETE) (\/[a-z_{}-]+)+"/)
    }

    const served = JSON.parse((await get(`${origin}/api/status`)).body)
    const printed = JSON.parse((await b.run(["status", "--json"])).stdout)
    // The same document, but for what only the running daemon knows (its controls, the account
    // it signed in as), which a separate `status` process reports as null.
    const { daemon: daemonOnly, ...servedShared } = served
    const { daemon: printedDaemon, ...printedShared } = printed
    assert.deepStrictEqual(shape(servedShared), shape(printedShared))
    assert.isNull(printedDaemon)
    assert.isObject(daemonOnly)
    assert.deepStrictEqual(served.entries, printed.entries)
    assert.strictEqual(served.root, printed.root)
    // Both see the daemon as the running dlsync (its transfers come from the store).
    assert.strictEqual(served.transfers.runningPid, daemon.child.pid)
    assert.strictEqual(printed.transfers.runningPid, daemon.child.pid)

    assert.strictEqual((await get(`${origin}/nowhere`)).status, 404)

    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.strictEqual(exit.stdout, "", "the daemon writes nothing to stdout")

    const lines = exit.stderr.split("\n").filter((l) => l !== "")
    assert.isAbove(lines.length, 5)
    for (const line of lines) {
      const entry = JSON.parse(line)
      assert.isString(entry.time, line)
      assert.isFalse(Number.isNaN(Date.parse(entry.time)), line)
      assert.include(["trace", "debug", "info", "warn", "error", "fatal"], entry.level, line)
      assert.isString(entry.message, line)
    }
    assert.isTrue(
      lines.some((l) => JSON.parse(l).level === "debug"),
      "debug lines were written"
    )
    assert.isTrue(
      lines.some((l) => typeof JSON.parse(l).requestId === "string"),
      "API exchanges carry their request id"
    )
    assert.isTrue(lines.some((l) => l.includes("health endpoint listening")))
    for (const secret of [b.emu.accessToken, b.emu.apiKey, b.emu.refreshToken]) {
      assert.notInclude(exit.stderr, secret)
    }
  })

  it.skipIf(skipWithout(NOTIFY_TOOLS()))(
    "sends READY=1 once listening, STATUS= after the pass, WATCHDOG=1 pings and STOPPING=1 on SIGTERM",
    async () => {
      box = await sandbox()
      const b = box
      seedSmallLibrary(b.emu)
      const socket = await notifySocket()
      const port = await freePort()
      const daemon = b.spawn(["run"], {
        env: {
          NOTIFY_SOCKET: socket.path,
          WATCHDOG_USEC: "500000",
          DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}`,
          DLSYNC_SYNC_POLL_INTERVAL: "1h"
        },
        deadlineMs: 90_000
      })
      await waitUntil(() => socket.messages.some((m) => m.startsWith("READY=1")), 30_000, "READY=1")
      // READY=1 is sent after the endpoint listens.
      assert.strictEqual((await get(`http://127.0.0.1:${port}/healthz`)).status, 200)
      await waitUntil(() => socket.messages.some((m) => m.startsWith("STATUS=pass:")), 30_000, "STATUS=pass")
      // WatchdogSec=500ms: pings every 250 ms.
      await waitUntil(() => socket.messages.filter((m) => m === "WATCHDOG=1").length >= 2, 10_000, "WATCHDOG=1")
      daemon.child.kill("SIGTERM")
      const exit = await daemon.exit
      assert.strictEqual(exit.code, 0, exit.stderr)
      await waitUntil(() => socket.messages.includes("STOPPING=1"), 10_000, "STOPPING=1")
      const payloads = socket.messages.filter((m) => m !== "BARRIER=1" && m !== "WATCHDOG=1")
      assert.strictEqual(payloads[0], "READY=1\nSTATUS=first pass")
      assert.strictEqual(payloads.at(-1), "STOPPING=1")
    }
  )

  it("/metrics shows the deletions the big-delete guard held back, and nothing is removed", async () => {
    box = await sandbox()
    const b = box
    const folder = seedMany(b.emu, "bulk", 60, 8)
    assert.strictEqual((await b.run(["run", "--once"])).code, 0)
    b.emu.control.remove([folder])
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const daemon = b.spawn(["run"], {
      env: { DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}`, DLSYNC_SYNC_POLL_INTERVAL: "1h" },
      deadlineMs: 90_000
    })
    const held = async () => {
      const reply = await get(`${origin}/metrics`).catch(() => undefined)
      // Until its routes are built the server answers 503 ("not serving yet"): not a figure yet.
      if (reply?.status !== 200) return undefined
      return sampleValue(parsePrometheusText(reply.body), "dlsync_held_deletions")
    }
    await eventually(
      async () => (await held()) === 60,
      "held deletions in /metrics",
      45_000,
      () => daemon.output().stderr.slice(-3000)
    )
    assert.strictEqual(Fs.readdirSync(Path.join(b.root, "bulk")).length, 60, "nothing removed")
    daemon.child.kill("SIGTERM")
    assert.strictEqual((await daemon.exit).code, 0)
  })

  it("--once opens no port; the daemon refuses a port in use (78)", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    const taken = Net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    cleanups.push(() => taken.close())
    const address = taken.address()
    assert(address !== null && typeof address === "object")
    const listen = `127.0.0.1:${address.port}`

    const once = await box.run(["run", "--once"], { env: { DLSYNC_SERVER_LISTEN: listen } })
    assert.strictEqual(once.code, 0, once.stderr)
    assert.notInclude(once.stderr, "health endpoint")

    const daemon = await box.run(["run"], { env: { DLSYNC_SERVER_LISTEN: listen } })
    assert.strictEqual(daemon.code, 78, daemon.stderr)
    assert.include(daemon.stderr, "already in use")
  })
})

// ---------------------------------------------------------------------------------------

function NOTIFY_TOOLS() {
  return ["systemd-notify", "systemd-socket-activate"]
}

/** A GET; an answer that does not come within 10 s counts as none (status 0), never a hang. */
const get = async (url: string) => {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
    return { status: response.status, headers: response.headers, body: await response.text() }
  } catch {
    return { status: 0, headers: new Headers(), body: "" }
  }
}

/** The value of one sample of the exposition text, matched by name and labels (in any order). */
const metricValue = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]])
    )
    const wanted = Object.entries(labels)
    if (wanted.length !== Object.keys(found).length) continue
    if (wanted.every(([k, v]) => found[k] === v)) return Number(match[3])
  }
  return undefined
}

/** The document's shape: keys and value kinds, recursively (arrays by their first element). */
const shape = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])]
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, shape(v)])
    )
  }
  return value === null ? "null" : typeof value
}

const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url))
const reader = fileURLToPath(new URL("../service/fixtures/notifyReader.ts", import.meta.url))

/** A notification socket served by notifyReader.ts (see test/service/SdNotify.test.ts). */
const notifySocket = () =>
  new Promise<{ readonly path: string; readonly messages: Array<string> }>((resolve, reject) => {
    for (const tool of NOTIFY_TOOLS()) if (!hasTool(tool)) reject(new Error(`${tool} not found`))
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-notify-"))
    const path = Path.join(dir, "notify.sock")
    const child: ChildProcess = spawn("systemd-socket-activate", ["--datagram", "-l", path, node, reader], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    cleanups.push(() => {
      child.kill("SIGKILL")
      Fs.rmSync(dir, { recursive: true, force: true })
    })
    const messages: Array<string> = []
    let pending = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) messages.push(JSON.parse(line))
    })
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("Listening on")) resolve({ path, messages })
    })
    child.on("error", reject)
  })
