import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { contentByte, contentKey, contentSlices, fillContent } from "../../src/emulator/content.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { waitUntil } from "../integration/harness.ts"
import { call, emulator } from "./helpers.ts"
import { decode, ErrorEnvelope, Single } from "./schemas.ts"

const Link = Schema.Struct({ url: Schema.String, expires_at: Schema.String })

const linkFor = async (e: RunningEmulator, id: string, token?: string) => {
  const result = await call(e, "POST", `/files/${id}/download-link`, token === undefined ? {} : { token })
  assert.strictEqual(result.status, 200, result.text)
  return decode(Single(Link), result.json).data
}

const expected = (id: string, start: number, length: number) => {
  const buffer = Buffer.alloc(length)
  fillContent(contentKey(id), start, buffer)
  return buffer
}

describe("download links", () => {
  it("point at the CDN origin (another port), expire in the future, and serve the whole file without a bearer", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "movie file.mkv", sizeBytes: 3_000_000 })
    const link = await linkFor(e, file.id, e.apiKey)
    assert.isTrue(link.url.startsWith(`${e.cdnUrl}/`))
    assert.notStrictEqual(new URL(link.url).origin, new URL(e.baseUrl).origin)
    assert.isAbove(Date.parse(link.expires_at), Date.now())
    const response = await fetch(link.url)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-length"), "3000000")
    assert.strictEqual(response.headers.get("accept-ranges"), "bytes")
    assert.strictEqual(response.headers.get("content-type"), "video/x-matroska")
    assert.match(response.headers.get("etag") ?? "", /^"[^"]+"$/)
    assert.isNotNull(response.headers.get("last-modified"))
    const body = Buffer.from(await response.arrayBuffer())
    assert.isTrue(body.equals(expected(file.id, 0, 3_000_000)))
    const cdnRequests = e.control.requests({ origin: "cdn" })
    assert.strictEqual(cdnRequests.length, 1)
    assert.notProperty(cdnRequests[0]?.headers, "authorization", "no Authorization header reached the CDN")
  })

  it("serve files named '.' and '..' (URL normalization must not eat the name segment)", async () => {
    const e = await emulator()
    for (const name of [".", "..", "a/b", "100% ?#"]) {
      const file = e.control.addFile({ name, sizeBytes: 1000 })
      const { url } = await linkFor(e, file.id)
      const response = await fetch(url)
      assert.strictEqual(response.status, 200, `${JSON.stringify(name)}: ${url}`)
      assert.isTrue(Buffer.from(await response.arrayBuffer()).equals(expected(file.id, 0, 1000)))
    }
  })

  it("serves Range requests: 206 with Content-Range, many requests per link, suffix and open ranges", async () => {
    const e = await emulator()
    const size = 200_000
    const file = e.control.addFile({ name: "a.bin", sizeBytes: size })
    const { url } = await linkFor(e, file.id)
    const cases: Array<[string, number, number]> = [
      ["bytes=0-99", 0, 99],
      ["bytes=65530-65545", 65530, 65545],
      ["bytes=199990-", 199990, size - 1],
      ["bytes=-10", size - 10, size - 1],
      ["bytes=150000-999999", 150000, size - 1]
    ]
    for (const [range, start, end] of cases) {
      const response = await fetch(url, { headers: { Range: range } })
      assert.strictEqual(response.status, 206, range)
      assert.strictEqual(response.headers.get("content-range"), `bytes ${start}-${end}/${size}`, range)
      const body = Buffer.from(await response.arrayBuffer())
      assert.isTrue(body.equals(expected(file.id, start, end - start + 1)), range)
    }
  })

  it("answers 416 with Content-Range bytes */size for an unsatisfiable range", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "a.bin", sizeBytes: 100 })
    const { url } = await linkFor(e, file.id)
    for (const range of ["bytes=100-", "bytes=500-600", "bytes=-0"]) {
      const response = await fetch(url, { headers: { Range: range } })
      assert.strictEqual(response.status, 416, range)
      assert.strictEqual(response.headers.get("content-range"), "bytes */100")
      await response.arrayBuffer()
    }
    const empty = e.control.addFile({ name: "empty.bin", sizeBytes: 0 })
    const emptyLink = await linkFor(e, empty.id)
    const whole = await fetch(emptyLink.url)
    assert.strictEqual(whole.status, 200)
    assert.strictEqual((await whole.arrayBuffer()).byteLength, 0)
    assert.strictEqual((await fetch(emptyLink.url, { headers: { Range: "bytes=0-" } })).status, 416)
  })

  it("honours If-Range only while the validator matches; If-None-Match gives 304", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "a.bin", sizeBytes: 1000 })
    const { url } = await linkFor(e, file.id)
    const head = await fetch(url, { method: "HEAD" })
    const etag = head.headers.get("etag") ?? ""
    const lastModified = head.headers.get("last-modified") ?? ""
    assert.strictEqual(head.headers.get("content-length"), "1000")
    assert.strictEqual((await fetch(url, { headers: { Range: "bytes=10-19", "If-Range": etag } })).status, 206)
    assert.strictEqual((await fetch(url, { headers: { Range: "bytes=10-19", "If-Range": lastModified } })).status, 206)
    assert.strictEqual((await fetch(url, { headers: { Range: "bytes=10-19", "If-Range": `W/${etag}` } })).status, 200)
    const notModified = await fetch(url, { headers: { "If-None-Match": etag } })
    assert.strictEqual(notModified.status, 304)
    assert.strictEqual(await notModified.text(), "")
    assert.strictEqual((await fetch(url, { headers: { "If-Modified-Since": lastModified } })).status, 304)
    const older = new Date(Date.parse(lastModified) - 1000).toUTCString()
    assert.strictEqual((await fetch(url, { headers: { "If-Modified-Since": older } })).status, 200)

    e.control.edit(file.id, { touchContent: true })
    const stale = await fetch(url, { headers: { Range: "bytes=10-19", "If-Range": etag } })
    assert.strictEqual(stale.status, 200, "new bytes: the whole file")
    assert.notStrictEqual(stale.headers.get("etag"), etag)
    const body = Buffer.from(await stale.arrayBuffer())
    const fresh = Buffer.alloc(1000)
    fillContent(contentKey(file.id, 2), 0, fresh)
    assert.isTrue(body.equals(fresh))
  })

  it("refuses an expired link (410) and a tampered signature (403)", async () => {
    const e = await emulator({ linkTtlMs: 60_000 })
    const file = e.control.addFile({ name: "a.bin", sizeBytes: 10 })
    const { url } = await linkFor(e, file.id)
    const tampered = url.replace(/sig=./, (m) => (m.endsWith("A") ? "sig=B" : "sig=A"))
    const forbidden = await fetch(tampered)
    assert.strictEqual(forbidden.status, 403)
    assert.strictEqual(decode(ErrorEnvelope, await forbidden.json()).error.code, "link_invalid")
    const otherFile = url.replace(`/dl/${file.id}/`, "/dl/i999999999/")
    assert.strictEqual((await fetch(otherFile)).status, 403, "a signature covers its file")
    e.control.advanceClock(60_001)
    const expired = await fetch(url)
    assert.strictEqual(expired.status, 410)
    assert.strictEqual(decode(ErrorEnvelope, await expired.json()).error.code, "link_expired")
  })

  it("refuses locked files (403 resource_locked), folders (409) and others' files (404)", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "a.bin", sizeBytes: 10 })
    const { url } = await linkFor(e, file.id)
    e.control.lock(file.id)
    const locked = await call(e, "POST", `/files/${file.id}/download-link`)
    assert.strictEqual(locked.status, 403)
    assert.strictEqual(decode(ErrorEnvelope, locked.json).error.code, "resource_locked")
    assert.strictEqual((await fetch(url)).status, 403, "an existing link stops working too")
    const folder = e.control.addFolder({ name: "F" })
    assert.strictEqual((await call(e, "POST", `/files/${folder.id}/download-link`)).status, 409)
    const other = e.control.addUser()
    assert.strictEqual((await call(e, "POST", `/files/${file.id}/download-link`, { token: other.apiKey })).status, 404)
    e.control.unlock(file.id)
    e.control.remove([file.id])
    assert.strictEqual((await fetch(url)).status, 404, "a deleted file's link answers 404")
  })

  it("survives clients that hang up mid-body", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "big.bin", sizeBytes: 512 * 1024 * 1024 })
    const { url } = await linkFor(e, file.id)
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController()
      const response = await fetch(url, { signal: controller.signal })
      const reader = response.body?.getReader()
      await reader?.read()
      controller.abort()
      await reader?.cancel().catch(() => undefined)
    }
    const after = await fetch(url, { headers: { Range: "bytes=0-9" } })
    assert.strictEqual(after.status, 206)
    assert.isTrue(Buffer.from(await after.arrayBuffer()).equals(expected(file.id, 0, 10)))
  })

  it("--cdn-base makes links point at another server", async () => {
    const e = await emulator({ cdnBase: "http://127.0.0.1:9/mirror/" })
    const file = e.control.addFile({ name: "a.bin", sizeBytes: 10 })
    const { url } = await linkFor(e, file.id)
    assert.isTrue(url.startsWith(`http://127.0.0.1:9/mirror/dl/${file.id}/a.bin?expires=`))
    assert.strictEqual(e.cdnUrl, "http://127.0.0.1:9/mirror")
    assert.match(e.cdnOrigin, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.strictEqual(
      (await fetch(`${e.cdnOrigin}${new URL(url).pathname.replace("/mirror", "")}${new URL(url).search}`)).status,
      200
    )
  })

  it("--content-dir serves <dir>/<file id> instead of generated bytes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "dlsync-content-"))
    try {
      const e = await emulator({ contentDir: dir })
      const real = e.control.addFile({ name: "real.txt", sizeBytes: 11 })
      const generated = e.control.addFile({ name: "gen.bin", sizeBytes: 5 })
      await writeFile(join(dir, real.id), "hello world")
      const realBody = await (await fetch((await linkFor(e, real.id)).url, { headers: { Range: "bytes=6-" } })).text()
      assert.strictEqual(realBody, "world")
      const genBody = Buffer.from(await (await fetch((await linkFor(e, generated.id)).url)).arrayBuffer())
      assert.isTrue(genBody.equals(expected(generated.id, 0, 5)))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

/** The server's side of a response ends after the client has read its last byte. */
const streamsEnded = (e: RunningEmulator) =>
  waitUntil(() => e.control.cdnDownloads().active === 0, 5_000, "the CDN's responses to end")

describe("a CDN capping each connection", () => {
  it("paces each file response, counts those streaming at once, and is set and read through /_control", async () => {
    const e = await emulator({ control: true, cdnRatePerConnection: 2 * 1024 * 1024 })
    const file = e.control.addFile({ name: "big.bin", sizeBytes: 600_000 })
    const { url } = await linkFor(e, file.id)
    const bodies = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const response = await fetch(url, { headers: { range: `bytes=${i * 200_000}-${i * 200_000 + 199_999}` } })
        assert.strictEqual(response.status, 206)
        return Buffer.from(await response.arrayBuffer())
      })
    )
    assert.isTrue(Buffer.concat(bodies).equals(expected(file.id, 0, 600_000)))
    await streamsEnded(e)
    assert.deepStrictEqual(e.control.cdnDownloads({ resetPeak: true }), { active: 0, peak: 3 })
    assert.deepStrictEqual(e.control.cdnDownloads(), { active: 0, peak: 0 })

    const control = `${e.authUrl}/_control`
    const lift = await fetch(`${control}/cdn/rate-per-connection`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bytes_per_second: null })
    })
    assert.strictEqual(lift.status, 204)
    assert.strictEqual(e.context.cdnDownloads.ratePerConnection, null)
    const bad = await fetch(`${control}/cdn/rate-per-connection`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bytes_per_second: 0 })
    })
    assert.strictEqual(bad.status, 422)
    await (await fetch(url)).arrayBuffer()
    await streamsEnded(e)
    const seen: unknown = await (await fetch(`${control}/cdn`)).json()
    assert.deepStrictEqual(seen, { data: { active: 0, peak: 1 } })
  })
})

describe("generated content", () => {
  it("is a pure function of (key, offset): fillContent agrees with contentByte anywhere", () => {
    const offsets = [0, 1, 7, 8, 9, 65_519, 65_520, 65_521, 65_535, 65_536, 65_544, 1_000_003, 5 * 1024 ** 3 + 12_345]
    for (const offset of offsets) {
      const buffer = Buffer.alloc(300)
      fillContent("file-a", offset, buffer)
      for (const i of [0, 1, 8, 150, 299])
        assert.strictEqual(buffer[i], contentByte("file-a", offset + i), `${offset}+${i}`)
    }
  })

  it("contentSlices yields the same bytes as fillContent, from any offset", () => {
    for (const [offset, length] of [
      [0, 10],
      [3, 200_000],
      [65_530, 20],
      [5 * 1024 ** 3 + 1, 1_048_576]
    ] as const) {
      const want = Buffer.alloc(length)
      fillContent("file-b", offset, want)
      assert.isTrue(Buffer.concat(contentSlices("file-b", offset, length)).equals(want), `${offset}+${length}`)
    }
  })

  it("contentSlices covers every block exactly, whatever its pattern phase", () => {
    for (let block = 0; block < 70_000; block += 7) {
      const slices = contentSlices("file-c", block * 65_536 + 3, 65_536)
      assert.strictEqual(
        slices.reduce((sum, slice) => sum + slice.length, 0),
        65_536,
        `block ${block}`
      )
    }
    const want = Buffer.alloc(65_536 * 3)
    fillContent("file-c", 4_367 * 65_536, want)
    assert.isTrue(Buffer.concat(contentSlices("file-c", 4_367 * 65_536, want.length)).equals(want))
  })

  it("differs between files, between versions and between blocks of one file", () => {
    const block = (key: string, index: number) => {
      const buffer = Buffer.alloc(65_536)
      fillContent(key, index * 65_536, buffer)
      return buffer
    }
    assert.isFalse(block("a", 0).equals(block("b", 0)))
    assert.isFalse(block(contentKey("a"), 0).equals(block(contentKey("a", 2), 0)))
    assert.isFalse(block("a", 1).equals(block("a", 2)), "a block copied to the wrong place shows")
    assert.isFalse(block("a", 0).subarray(8).equals(block("a", 0).subarray(9, 65_537)), "a one-byte shift shows")
  })
})
