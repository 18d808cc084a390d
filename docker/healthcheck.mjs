// The image's HEALTHCHECK: GET /healthz on dlsync's local server, with Node's fetch (the
// image has no curl). Exit 0 when it answers 2xx, 1 otherwise — Docker's contract.
//
// The address follows DLSYNC_SERVER_LISTEN ("host:port"; a wildcard host is reached on
// loopback); "off" turns the check into a no-op success. If server.listen is changed in
// config.toml instead, set DLSYNC_SERVER_LISTEN to match or override the healthcheck.
const DEFAULT_LISTEN = "127.0.0.1:7660"
const TIMEOUT_MS = 4000

const listen = (process.env.DLSYNC_SERVER_LISTEN ?? "").trim() || DEFAULT_LISTEN
if (["off", "false", "0", "no"].includes(listen.toLowerCase())) process.exit(0)

const url = healthUrl(listen)
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) })
  if (!response.ok) console.error(`${url}: HTTP ${response.status}`)
  process.exit(response.ok ? 0 : 1)
} catch (error) {
  console.error(`${url}: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}

function healthUrl(value) {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value)
  if (match === null) return `http://127.0.0.1:7660/healthz`
  const host = match[1] ?? match[2] ?? ""
  const port = match[3]
  if (host === "" || host === "0.0.0.0" || host === "*") return `http://127.0.0.1:${port}/healthz`
  if (host === "::") return `http://[::1]:${port}/healthz`
  return host.includes(":") ? `http://[${host}]:${port}/healthz` : `http://${host}:${port}/healthz`
}
