import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Schema } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import { planZip, type ZipEntry, type ZipOptions } from "../../src/emulator/zip.ts"
import { call, emulator } from "./helpers.ts"
import { decode, ErrorEnvelope, Single } from "./schemas.ts"

const run = promisify(execFile)
const ZipLink = Schema.Struct({ url: Schema.String, expires_at: Schema.Null })

let dir = ""
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "dlsync-zip-"))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** `unzip -t` must accept the archive; returns `unzip -Z1` (the entry names). */
const checkWithUnzip = async (path: string): Promise<Array<string>> => {
  const tested = await run("unzip", ["-t", path])
  assert.match(tested.stdout, /No errors detected/)
  const listed = await run("unzip", ["-Z1", path])
  return listed.stdout.split("\n").filter((line) => line.length > 0)
}

describe("POST /files/zip", () => {
  it("returns one URL with expires_at null that serves a valid stored ZIP of files and folders", async () => {
    const e = await emulator()
    const folder = e.control.addFolder({ name: "Show" })
    const season = e.control.addFolder({ name: "Season 1", parentId: folder.id })
    const ep = e.control.addFile({ name: "ep1.mkv", parentId: season.id, sizeBytes: 1_500_000 })
    const sub = e.control.addFile({ name: "ep1.srt", parentId: season.id, sizeBytes: 0 })
    const loose = e.control.addFile({ name: "a/b é.txt", sizeBytes: 777 })
    const result = await call(e, "POST", "/files/zip", { body: { ids: [folder.id, loose.id] }, token: e.apiKey })
    assert.strictEqual(result.status, 200, result.text)
    const link = decode(Single(ZipLink), result.json).data
    const response = await fetch(link.url)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-type"), "application/zip")
    const bytes = Buffer.from(await response.arrayBuffer())
    assert.strictEqual(Number(response.headers.get("content-length")), bytes.length)
    const path = join(dir, "served.zip")
    await writeFile(path, bytes)
    const names = await checkWithUnzip(path)
    assert.sameMembers(names, [
      "Show/",
      "Show/Season 1/",
      "Show/Season 1/ep1.mkv",
      "Show/Season 1/ep1.srt",
      "a_b é.txt"
    ])
    const { stdout } = await run("unzip", ["-p", path, "Show/Season 1/ep1.mkv"], {
      encoding: "buffer",
      maxBuffer: 8 * 1024 * 1024
    })
    const want = Buffer.alloc(1_500_000)
    fillContent(contentKey(ep.id), 0, want)
    assert.isTrue(Buffer.from(stdout).equals(want), "the archived bytes are the file's bytes")
    assert.isDefined(sub)
  })

  it("refuses locked content (403), unknown ids (404) and a bad id list (422)", async () => {
    const e = await emulator()
    const folder = e.control.addFolder({ name: "F" })
    e.control.addFile({ name: "x", parentId: folder.id, locked: true })
    const locked = await call(e, "POST", "/files/zip", { body: { ids: [folder.id] } })
    assert.strictEqual(locked.status, 403)
    assert.strictEqual(decode(ErrorEnvelope, locked.json).error.code, "resource_locked")
    assert.strictEqual((await call(e, "POST", "/files/zip", { body: { ids: ["nope"] } })).status, 404)
    assert.strictEqual((await call(e, "POST", "/files/zip", { body: { ids: [] } })).status, 422)
  })

  it("serves deflated archives (chunked) and points links at another base when the control API says so", async () => {
    const e = await emulator({ control: true })
    const file = e.control.addFile({ name: "a.txt", sizeBytes: 100_000 })
    const set = await call(e, "PUT", "/_control/zip", {
      body: { method: "deflate", base: "http://proxy.invalid:1/p/" }
    })
    assert.strictEqual(set.status, 204)
    const proxied = decode(Single(ZipLink), (await call(e, "POST", "/files/zip", { body: { ids: [file.id] } })).json)
    assert.match(proxied.data.url, /^http:\/\/proxy\.invalid:1\/p\/zip\/[^/]+\/a\.txt\.zip$/)
    assert.strictEqual((await call(e, "PUT", "/_control/zip", { body: { base: null } })).status, 204)
    assert.strictEqual((await call(e, "PUT", "/_control/zip", { body: { method: "bzip2" } })).status, 422)
    const link = decode(Single(ZipLink), (await call(e, "POST", "/files/zip", { body: { ids: [file.id] } })).json).data
    const response = await fetch(link.url)
    assert.strictEqual(response.status, 200)
    assert.isNull(response.headers.get("content-length"))
    const path = join(dir, "deflated.zip")
    await writeFile(path, Buffer.from(await response.arrayBuffer()))
    assert.sameMembers(await checkWithUnzip(path), ["a.txt"])
    const { stdout } = await run("unzip", ["-v", path])
    assert.match(stdout, /Defl:N/)
  })

  it("a tampered ZIP link is refused", async () => {
    const e = await emulator()
    const file = e.control.addFile({ name: "a.txt", sizeBytes: 3 })
    const link = decode(Single(ZipLink), (await call(e, "POST", "/files/zip", { body: { ids: [file.id] } })).json).data
    const tampered = link.url.replace("/zip/", "/zip/x")
    assert.strictEqual((await fetch(tampered)).status, 403)
  })
})

describe("planZip", () => {
  const entries = (): Array<ZipEntry> => [
    { name: "dir/", size: 0, modifiedMs: Date.UTC(2024, 0, 2, 3, 4, 6) },
    {
      name: "dir/one.bin",
      size: 70_000,
      modifiedMs: Date.UTC(2024, 0, 2),
      read: async (o, b) => fillContent("one", o, b)
    },
    { name: "empty.txt", size: 0, modifiedMs: 0, read: async () => {} }
  ]

  const write = async (forceZip64: boolean, options: ZipOptions = {}) => {
    const plan = planZip(entries(), { forceZip64, ...options })
    const chunks: Array<Buffer> = []
    const complete = await plan.stream(async (chunk) => {
      chunks.push(chunk)
      return true
    })
    assert.isTrue(complete)
    const bytes = Buffer.concat(chunks)
    if (options.method === "deflate")
      assert.isUndefined(plan.length, "a deflated archive's length is not known up front")
    else assert.strictEqual(bytes.length, plan.length, "Content-Length is known up front")
    return bytes
  }

  it("writes an archive unzip accepts, with the announced length", async () => {
    const path = join(dir, "plain.zip")
    await writeFile(path, await write(false))
    assert.sameMembers(await checkWithUnzip(path), ["dir/", "dir/one.bin", "empty.txt"])
  })

  it("writes valid ZIP64 records (forced on small entries)", async () => {
    const path = join(dir, "zip64.zip")
    await writeFile(path, await write(true))
    assert.sameMembers(await checkWithUnzip(path), ["dir/", "dir/one.bin", "empty.txt"])
  })

  for (const [label, options] of [
    ["deflated", { method: "deflate" }],
    ["deflated, ZIP64", { method: "deflate", forceZip64: true }],
    ["sizes in the local header", { descriptor: false }],
    ["descriptors without their signature", { descriptorSignature: false }],
    ["descriptors without their signature, ZIP64", { descriptorSignature: false, forceZip64: true }]
  ] as const) {
    it(`writes an archive unzip accepts: ${label}`, async () => {
      const path = join(dir, `${label}.zip`)
      await writeFile(path, await write(options.forceZip64 === true, options))
      assert.sameMembers(await checkWithUnzip(path), ["dir/", "dir/one.bin", "empty.txt"])
      const { stdout } = await run("unzip", ["-p", path, "dir/one.bin"], { encoding: "buffer" })
      const want = Buffer.alloc(70_000)
      fillContent("one", 0, want)
      assert.isTrue(Buffer.from(stdout).equals(want))
      if (options.method === "deflate") {
        const { stdout: verbose } = await run("unzip", ["-v", path])
        assert.match(verbose, /Defl:N/, "the file member is deflated")
      }
    })
  }

  it("stops when the receiver is gone", async () => {
    const plan = planZip(entries())
    let writes = 0
    assert.isFalse(await plan.stream(async () => ++writes < 2))
    assert.strictEqual(writes, 2)
  })
})
