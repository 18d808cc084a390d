/**
 * Stand-in for the service's link endpoint in the benchmarks: answers
 * `POST /files/<id>/download-link` with `{ url, expires_at }` pointing at the benchmark's
 * nginx, so dlsync pays one API round trip per file as it will in production. Runs in its
 * own process so its CPU is not counted as dlsync's. Prints its port on stdout.
 *   node bench/support/linkServer.ts <cdnBase> <bearer>
 */
import * as Http from "node:http"

const cdnBase = process.argv[2] ?? "http://127.0.0.1:1"
const bearer = process.argv[3] ?? ""

const server = Http.createServer((req, res) => {
  const m = /^\/files\/([^/]+)\/download-link$/.exec(req.url ?? "")
  if (req.method !== "POST" || m === null) {
    res.writeHead(404).end()
    return
  }
  if (req.headers.authorization !== `Bearer ${bearer}`) {
    res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"code":"unauthorized"}}')
    return
  }
  req.resume()
  req.on("end", () => {
    const id = decodeURIComponent(m[1] ?? "")
    const body = JSON.stringify({
      url: `${cdnBase}/${id}`,
      expires_at: new Date(Date.now() + 3_600_000).toISOString()
    })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
  })
})
server.keepAliveTimeout = 30_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${address !== null && typeof address === "object" ? address.port : 0}\n`)
})
