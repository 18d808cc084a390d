/**
 * What bench/hostile.ts sees of the daemon while an attack runs, from a process of its own
 * (so that the attacker's work delays none of it):
 *
 *   node bench/support/watchDaemon.ts <health origin> <daemon pid>
 *
 * Asks GET /healthz every 25 ms on a fresh connection (as Docker's health check does) and
 * reads the daemon's VmRSS from /proc every 10 ms, until its stdin closes. Prints
 * `watching` once the first answer came, then at the end one JSON line:
 * `{ latenciesMs, failures, maxRssBytes }` (a failure: an error, a status other than 200, or
 * no answer within 5 s).
 */
import * as Fs from "node:fs"
import * as Http from "node:http"

const [origin = "", pidText = "0"] = process.argv.slice(2)
const pid = Number(pidText)

const latenciesMs: Array<number> = []
let failures = 0
let maxRssBytes = 0
let stopping = false

const rssBytes = (): number => {
  const line = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}

const probe = () =>
  new Promise<void>((resolve) => {
    const started = performance.now()
    const request = Http.get(`${origin}/healthz`, { agent: false, timeout: 5_000 }, (response) => {
      response.resume()
      response.on("end", () => {
        if (response.statusCode === 200) latenciesMs.push(performance.now() - started)
        else failures++
        resolve()
      })
    })
    request.on("timeout", () => request.destroy(new Error("timeout")))
    request.on("error", () => {
      failures++
      resolve()
    })
  })

const sampler = setInterval(() => {
  maxRssBytes = Math.max(maxRssBytes, rssBytes())
}, 10)

const probing = (async () => {
  await probe()
  process.stdout.write("watching\n")
  while (!stopping) {
    const next = performance.now() + 25
    await probe()
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())))
  }
})()

process.stdin.resume()
process.stdin.on("end", async () => {
  stopping = true
  await probing
  clearInterval(sampler)
  maxRssBytes = Math.max(maxRssBytes, rssBytes())
  process.stdout.write(`${JSON.stringify({ latenciesMs, failures, maxRssBytes })}\n`)
  process.exit(0)
})
