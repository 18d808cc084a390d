/**
 * The HTTP load of bench/memory.ts, in its own process so that its memory and CPU are not
 * the daemon's:
 *
 *   node bench/support/httpLoad.ts requests <origin> <count> <concurrency>
 *       `count` GETs over keep-alive connections (`concurrency` at once), round-robin over
 *       /healthz, /readyz, /metrics and /api/status; every answer must be 200.
 *   node bench/support/httpLoad.ts idle <origin> <count> <holdMs>
 *       opens `count` connections that send nothing, holds them `holdMs`, then closes them.
 *
 * Prints one JSON line: `{ ok, failed, seconds }` or `{ opened, refused, seconds }`.
 */
import * as Http from "node:http"
import * as Net from "node:net"

const PATHS = ["/healthz", "/readyz", "/metrics", "/api/status"]

const requests = async (origin: string, count: number, concurrency: number) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })
  let next = 0
  let ok = 0
  let failed = 0
  const one = (path: string) =>
    new Promise<void>((resolve) => {
      const req = Http.get(`${origin}${path}`, { agent }, (res) => {
        res.resume()
        res.on("end", () => {
          if (res.statusCode === 200) ok++
          else failed++
          resolve()
        })
      })
      req.on("error", () => {
        failed++
        resolve()
      })
    })
  const worker = async () => {
    while (next < count) {
      const i = next++
      await one(PATHS[i % PATHS.length] ?? "/healthz")
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  agent.destroy()
  return { ok, failed }
}

const idle = async (origin: string, count: number, holdMs: number) => {
  const { hostname, port } = new URL(origin)
  const sockets: Array<Net.Socket> = []
  let refused = 0
  const open = () =>
    new Promise<void>((resolve) => {
      const socket = Net.connect(Number(port), hostname)
      socket.once("connect", () => {
        sockets.push(socket)
        resolve()
      })
      socket.once("error", () => {
        refused++
        resolve()
      })
    })
  // In batches, so the listen backlog is not overrun.
  for (let i = 0; i < count; i += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - i) }, open))
  }
  process.stderr.write(`httpLoad: ${sockets.length} idle connections open\n`)
  await new Promise((r) => setTimeout(r, holdMs))
  const closedByServer = sockets.filter((s) => s.destroyed || s.readyState !== "open").length
  for (const s of sockets) s.destroy()
  return { opened: sockets.length, refused, closedByServer }
}

const [mode, origin, a, b] = process.argv.slice(2)
const t0 = performance.now()
const result =
  mode === "requests"
    ? await requests(origin ?? "", Number(a), Number(b))
    : await idle(origin ?? "", Number(a), Number(b))
process.stdout.write(`${JSON.stringify({ ...result, seconds: (performance.now() - t0) / 1000 })}\n`)
