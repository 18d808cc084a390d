/**
 * The web page's API over plain HTTP, against the real daemon on loopback (where nobody
 * signs in): a write needs the page's token and is refused when a browser says another
 * site sent it; a Host not this server's is refused; bodies are bounded; every answer carries
 * the strict headers; the page's only script and style are its own, allowed by their hashes;
 * the page carries the status document /api/status answers. One daemon for the file.
 * (A client that stops reading the event stream: eventStream.test.ts.)
 */
import { createHash } from "node:crypto"
import * as Net from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, seedSmallLibrary } from "../integration/harness.ts"
import { csrfToken, type Daemon, ensurePageBuilt, firstAnswerBesideStatus, startDaemon } from "./pageHarness.ts"

let box: Sandbox
let daemon: Daemon
let token = ""

beforeAll(async () => {
  await ensurePageBuilt()
  box = await sandbox()
  seedSmallLibrary(box.emu)
  daemon = await startDaemon(box, { DLSYNC_SYNC_POLL_INTERVAL: "1h" })
  token = await csrfToken(daemon.url)
}, 60_000)

afterAll(async () => {
  await daemon?.stop()
  await box?.close()
})

const post = (path: string, headers: Record<string, string>, body?: string) =>
  fetch(`${daemon.url}${path}`, { method: "POST", headers, ...(body === undefined ? {} : { body }) })

const errorOf = async (response: Response): Promise<string> => {
  const body: unknown = await response.json()
  return typeof body === "object" && body !== null && "error" in body ? String(body.error) : JSON.stringify(body)
}

describe("the web page's API on loopback", () => {
  it("refuses a write without the page's token, takes it with", async () => {
    const without = await post("/api/sync", {})
    assert.strictEqual(without.status, 403)
    assert.match(await errorOf(without), /x-csrf-token/)
    const wrong = await post("/api/sync", { "x-csrf-token": "guessed" })
    assert.strictEqual(wrong.status, 403)
    assert.strictEqual((await post("/api/sync", { "x-csrf-token": token })).status, 202)
  })

  it("refuses a write a browser says another site sent, token or not", async () => {
    for (const headers of [
      { origin: "http://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { referer: "http://evil.example/page" }
    ]) {
      const answer = await post("/api/transfers/pause", { "x-csrf-token": token, ...headers })
      assert.strictEqual(answer.status, 403, JSON.stringify(headers))
      assert.match(await errorOf(answer), /cross-site/)
    }
    const status: unknown = await (await fetch(`${daemon.url}/api/status`)).json()
    assert.deepInclude(Object(status).daemon?.controls, { transfersPaused: false })
    // The page's own origin is this server's.
    const same = await post("/api/transfers/pause", { "x-csrf-token": token, origin: daemon.url })
    assert.strictEqual(same.status, 200)
    assert.strictEqual((await post("/api/transfers/resume", { "x-csrf-token": token })).status, 200)
  })

  it("answers only its own Host (DNS rebinding)", async () => {
    for (const path of ["/", "/api/status", "/api/session", "/api/events"]) {
      const answer = await rawRequest(`GET ${path} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
      assert.match(answer, /^HTTP\/1\.1 403 /, path)
    }
  })

  it("bounds and checks bodies: over 16 KiB is 413, unreadable JSON one line", async () => {
    const big = await post(
      "/api/bandwidth",
      { "x-csrf-token": token, "content-type": "application/json" },
      JSON.stringify({ bytesPerSecond: 1, pad: "x".repeat(20_000) })
    )
    assert.strictEqual(big.status, 413)
    assert.match(await errorOf(big), /over 16384 bytes/)
    const broken = await post("/api/bandwidth", { "x-csrf-token": token, "content-type": "application/json" }, "{")
    assert.strictEqual(broken.status, 400)
    assert.notInclude(await errorOf(broken), "\n")
    const past = await post(
      "/api/bandwidth",
      { "x-csrf-token": token, "content-type": "application/json" },
      JSON.stringify({ bytesPerSecond: 1000, until: "2001-01-01T00:00:00Z" })
    )
    assert.strictEqual(past.status, 400)
  })

  it("sends the strict headers; the page's one script and one style are its own, allowed by their hashes", async () => {
    const page = await fetch(`${daemon.url}/`)
    const html = await page.text()
    for (const answer of [page, await fetch(`${daemon.url}/api/status`), await fetch(`${daemon.url}/api/session`)]) {
      assert.include(answer.headers.get("content-security-policy"), "default-src 'none'")
      assert.include(answer.headers.get("content-security-policy"), "frame-ancestors 'none'")
      assert.strictEqual(answer.headers.get("x-frame-options"), "DENY")
      assert.strictEqual(answer.headers.get("x-content-type-options"), "nosniff")
    }
    const policy = page.headers.get("content-security-policy") ?? ""
    const script = /<script type="module">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? ""
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? ""
    assert.include(policy, `script-src 'sha256-${createHash("sha256").update(script).digest("base64")}';`)
    assert.include(policy, `style-src 'sha256-${createHash("sha256").update(style).digest("base64")}';`)
    assert.lengthOf(html.match(/<script/g) ?? [], 2, "the data block and the script: no other")
    assert.notMatch(html, /\sstyle=|\ssrc=|<link rel="stylesheet"/, "no other script or style, nothing to fetch")
    assert.strictEqual(page.headers.get("cache-control"), "no-store")
    assert.strictEqual((await fetch(`${daemon.url}/assets/..%2Fconfig.toml`)).status, 404)
  })

  it("carries the status document in the page, the one /api/status answers", async () => {
    const { first, status } = await firstAnswerBesideStatus(daemon.url)
    assert.deepStrictEqual(first, { loginRequired: false, signedIn: true, status })
    assert.strictEqual(Object(status).root, box.root, "this daemon's document")
    // fetch asks for gzip, as browsers do: the page above came gzip-encoded.
    assert.strictEqual((await fetch(`${daemon.url}/`)).headers.get("content-encoding"), "gzip")
  })
})

/** One raw HTTP/1.1 exchange (fetch sets Host itself); the answer's text. */
const rawRequest = (request: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.connect(Number(new URL(daemon.url).port), "127.0.0.1")
    let answer = ""
    socket.on("data", (chunk) => {
      answer += chunk.toString()
    })
    socket.on("end", () => resolve(answer))
    socket.on("error", reject)
    socket.end(request)
  })
