import { request as httpRequest } from "node:http"
import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import { Faults, matchesPattern } from "../../src/emulator/faults.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { call, emulator } from "./helpers.ts"
import { ChangePage, decode, ErrorEnvelope, Single } from "./schemas.ts"

/** A raw GET that reports what arrived and how the connection ended. */
const rawGet = (url: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; declared: number; received: number; ended: "complete" | "cut" }>((resolve) => {
    let status = 0
    let declared = 0
    let received = 0
    let settled = false
    const done = (ended: "complete" | "cut") => {
      if (settled) return
      settled = true
      resolve({ status, declared, received, ended })
    }
    const req = httpRequest(url, { headers: { ...headers, Connection: "close" } }, (res) => {
      status = res.statusCode ?? 0
      declared = Number(res.headers["content-length"])
      res.on("data", (chunk: Buffer) => {
        received += chunk.length
      })
      res.on("error", () => done("cut"))
      res.on("close", () => done(res.complete ? "complete" : "cut"))
    })
    req.on("error", () => setImmediate(() => done("cut")))
    req.end()
  })

const Link = Schema.Struct({ url: Schema.String, expires_at: Schema.String })
const linkFor = async (e: RunningEmulator, size: number) => {
  const file = e.control.addFile({ name: "f.bin", sizeBytes: size })
  const result = await call(e, "POST", `/files/${file.id}/download-link`)
  return { id: file.id, url: decode(Single(Link), result.json).data.url }
}

describe("fault injection", () => {
  it("status_429 answers with Retry-After for the next N matching requests, then stops", async () => {
    const e = await emulator()
    e.control.addFault({ kind: "status_429", path: "/api/v1/account", count: 2, retryAfterSeconds: 7 })
    for (let i = 0; i < 2; i++) {
      const limited = await call(e, "GET", "/account")
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.headers.get("retry-after"), "7")
      assert.strictEqual(decode(ErrorEnvelope, limited.json).error.code, "rate_limited")
      assert.isNotNull(limited.headers.get("x-request-id"))
    }
    assert.strictEqual((await call(e, "GET", "/account")).status, 200)
    assert.deepStrictEqual(e.control.faults(), [])
  })

  it("status_500 and status_503 replace the answer without running the route", async () => {
    const e = await emulator()
    e.control.addFault({ kind: "status_500", path: "/api/v1/files/folder", method: "POST" })
    const failed = await call(e, "POST", "/files/folder", { body: { name: "A" } })
    assert.strictEqual(failed.status, 500)
    assert.strictEqual(e.state.primaryUser.tree.size, 0, "no side effect")
    e.control.addFault({ kind: "status_503", path: "/api/v1/files", retryAfterSeconds: 3 })
    const unavailable = await call(e, "GET", "/files")
    assert.strictEqual(unavailable.status, 503)
    assert.strictEqual(unavailable.headers.get("retry-after"), "3")
  })

  it("matches route templates, globs and methods", async () => {
    assert.isTrue(matchesPattern("/api/v1/files/:file", "/api/v1/files/i1", "/api/v1/files/:file"))
    assert.isTrue(matchesPattern("/api/v1/files/*", "/api/v1/files/i1", undefined))
    assert.isFalse(matchesPattern("/api/v1/files/*", "/api/v1/files/i1/state", undefined))
    assert.isTrue(matchesPattern("/api/**", "/api/v1/files/i1/state", undefined))
    assert.isTrue(matchesPattern("/dl/**", "/dl/i1/name.mkv", "/dl/:file/:name"))
    const e = await emulator()
    e.control.addFault({ kind: "status_500", path: "/api/v1/files/:file", method: "GET" })
    assert.strictEqual((await call(e, "GET", "/files")).status, 200, "another route")
    assert.strictEqual((await call(e, "GET", "/files/x")).status, 500)
  })

  it("probability fires per request until removed; count caps it", () => {
    const rolls = [0.1, 0.9, 0.2, 0.05]
    const faults = new Faults(() => rolls.shift() ?? 1)
    const fault = faults.add({ kind: "status_500", path: "/x", probability: 0.5 })
    const fired = [0, 1, 2, 3].map(() => faults.take("GET", "/x", undefined) !== undefined)
    assert.deepStrictEqual(fired, [true, false, true, true])
    assert.strictEqual(fault.fired, 3)
    assert.isTrue(faults.remove(fault.id))
    const capped = new Faults(() => 0)
    capped.add({ kind: "status_500", path: "/x", probability: 0.5, count: 1 })
    assert.isDefined(capped.take("GET", "/x", undefined))
    assert.isUndefined(capped.take("GET", "/x", undefined))
    assert.throws(() => capped.add({ kind: "status_500", path: "/x", probability: 2 }), RangeError)
    assert.throws(() => capped.add({ kind: "status_500", path: "x" }), RangeError)
  })

  it("reset: the route runs, part of the body is sent, then the connection is reset", async () => {
    const e = await emulator()
    e.control.addFault({ kind: "reset", path: "/api/v1/files/folder", afterBytes: 10 })
    const failure = await call(e, "POST", "/files/folder", { body: { name: "A" } }).then(
      () => "answered",
      () => "failed"
    )
    assert.strictEqual(failure, "failed")
    assert.strictEqual(e.state.primaryUser.tree.size, 1, "the folder was created although the answer was lost")
    const { url } = await linkFor(e, 3_000_000)
    e.control.addFault({ kind: "reset", path: "/dl/:file/:name", afterBytes: 100_000 })
    const cut = await rawGet(url)
    assert.strictEqual(cut.status, 200)
    assert.strictEqual(cut.declared, 3_000_000)
    assert.isAtMost(cut.received, 100_000)
    assert.notStrictEqual(cut.ended, "complete")
  })

  it("truncate: the full Content-Length is promised, fewer bytes arrive, the connection closes", async () => {
    const e = await emulator()
    const { url } = await linkFor(e, 1_000_000)
    e.control.addFault({ kind: "truncate", path: "/dl/**", afterBytes: 123_456 })
    const cut = await rawGet(url)
    assert.strictEqual(cut.declared, 1_000_000)
    assert.strictEqual(cut.received, 123_456)
    assert.notStrictEqual(cut.ended, "complete")
    const whole = await rawGet(url)
    assert.strictEqual(whole.received, 1_000_000, "only the next request was cut")
    assert.strictEqual(whole.ended, "complete")
  })

  it("slow: the body arrives at the configured pace", async () => {
    const e = await emulator()
    const { url } = await linkFor(e, 40_000)
    e.control.addFault({ kind: "slow", path: "/dl/**", bytesPerSecond: 100_000 })
    const started = performance.now()
    const slow = await rawGet(url)
    const elapsed = performance.now() - started
    assert.strictEqual(slow.received, 40_000)
    assert.isAtLeast(elapsed, 300, `40 kB at 100 kB/s took ${elapsed.toFixed(0)} ms`)
  })

  it("malformed_json: status and length are right, the text does not parse", async () => {
    const e = await emulator()
    e.control.addFault({ kind: "malformed_json", path: "/api/v1/account" })
    const response = await fetch(`${e.baseUrl}/account`, { headers: { Authorization: `Bearer ${e.apiKey}` } })
    assert.strictEqual(response.status, 200)
    const text = await response.text()
    assert.strictEqual(Number(response.headers.get("content-length")), Buffer.byteLength(text))
    assert.throws(() => JSON.parse(text))
  })

  it("duplicate_items: a changes page repeats its items", async () => {
    const e = await emulator()
    const a = e.control.addFile({ name: "a.txt" })
    const b = e.control.addFile({ name: "b.txt" })
    e.control.addFault({ kind: "duplicate_items", path: "/api/v1/files/changes" })
    const page = decode(ChangePage, (await call(e, "GET", "/files/changes")).json)
    assert.deepStrictEqual(
      page.data.map((c) => c.id),
      [a.id, a.id, b.id, b.id]
    )
  })

  it("range_ignored: 200 with the whole body despite Range", async () => {
    const e = await emulator()
    const { url } = await linkFor(e, 5000)
    e.control.addFault({ kind: "range_ignored", path: "/dl/**" })
    const response = await fetch(url, { headers: { Range: "bytes=100-199" } })
    assert.strictEqual(response.status, 200)
    assert.isNull(response.headers.get("content-range"))
    assert.strictEqual((await response.arrayBuffer()).byteLength, 5000)
  })

  it("wrong_range_start: 206 for a range starting elsewhere, header and bytes agreeing", async () => {
    const e = await emulator()
    const { id, url } = await linkFor(e, 5000)
    e.control.addFault({ kind: "wrong_range_start", path: "/dl/**" })
    const response = await fetch(url, { headers: { Range: "bytes=100-199" } })
    assert.strictEqual(response.status, 206)
    const header = response.headers.get("content-range") ?? ""
    const start = Number(/^bytes (\d+)-199\/5000$/.exec(header)?.[1])
    assert.notStrictEqual(start, 100)
    const body = Buffer.from(await response.arrayBuffer())
    const want = Buffer.alloc(200 - start)
    fillContent(contentKey(id), start, want)
    assert.isTrue(body.equals(want))
  })

  it("link_expired: a valid link answers 410 once", async () => {
    const e = await emulator()
    const { url } = await linkFor(e, 10)
    e.control.addFault({ kind: "link_expired", path: "/dl/:file/:name" })
    assert.strictEqual((await fetch(url)).status, 410)
    assert.strictEqual((await fetch(url)).status, 200)
  })

  it("apply to every area's routes, OAuth and file state included", async () => {
    const e = await emulator()
    e.control.addFault({ kind: "status_503", path: "/oauth/token", retryAfterSeconds: 1 })
    const token = await fetch(`${e.authUrl}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=x"
    })
    assert.strictEqual(token.status, 503)
    const file = e.control.addFile({ name: "a.txt" })
    e.control.addFault({ kind: "status_429", path: "/api/v1/files/:file/state" })
    assert.strictEqual((await call(e, "GET", `/files/${file.id}/state`)).status, 429)
    assert.strictEqual((await call(e, "GET", `/files/${file.id}/state`)).status, 200)
  })

  it("latency: a fixed or bounded random delay per matching request, added to other faults, never consumed by them", () => {
    const rolls = [0, 0.999, 0.5]
    const faults = new Faults(() => rolls.shift() ?? 0)
    faults.add({ kind: "latency", path: "/api/v1/**", probability: 1, delayMs: 20, maxDelayMs: 60 })
    faults.add({ kind: "latency", path: "/api/v1/account", count: 1 })
    faults.add({ kind: "status_500", path: "/api/v1/account" })
    // The bounded fault draws its probability (0: fires) and its delay (0.999: the maximum);
    // the fixed 50 ms one draws a roll that cannot change it.
    assert.strictEqual(faults.delayFor("GET", "/api/v1/account", undefined), 60 + 50)
    assert.strictEqual(faults.take("GET", "/api/v1/account", undefined)?.kind, "status_500")
    // The default 50 ms fault fired its one time: only the bounded one is left (rolls 0 and 0).
    assert.strictEqual(faults.delayFor("GET", "/api/v1/account", undefined), 20)
    assert.strictEqual(faults.delayFor("GET", "/dl/x", undefined), 0)
    assert.isUndefined(faults.take("GET", "/api/v1/files", undefined), "latency is never a fault's answer")
    assert.throws(() => faults.add({ kind: "latency", path: "/x", delayMs: 10, maxDelayMs: 5 }), RangeError)
    assert.throws(() => faults.add({ kind: "latency", path: "/x", delayMs: -1 }), RangeError)
  })

  it("latency over HTTP: the route answers no sooner than the delay, the control API is never delayed", async () => {
    const e = await emulator({ control: true })
    const created = await call(e, "POST", "/_control/faults", {
      body: { kind: "latency", path: "/**", probability: 1, delay_ms: 300 }
    })
    assert.strictEqual(created.status, 201)
    const started = performance.now()
    assert.strictEqual((await call(e, "GET", "/account")).status, 200)
    const elapsed = performance.now() - started
    assert.isAtLeast(elapsed, 298, `answered after ${elapsed.toFixed(0)} ms`)
    assert.strictEqual(e.control.faults()[0]?.fired, 1, "the control API's own requests were not delayed")
  })

  it("can be registered over the control API, which faults never touch", async () => {
    const e = await emulator({ control: true })
    const created = await call(e, "POST", "/_control/faults", {
      body: { kind: "status_503", path: "/api/v1/services", count: 1, retry_after_seconds: 2 }
    })
    assert.strictEqual(created.status, 201)
    assert.strictEqual((await call(e, "GET", "/services")).status, 503)
    assert.strictEqual((await call(e, "GET", "/services")).status, 200)
    const invalid = await call(e, "POST", "/_control/faults", { body: { kind: "explode", path: "/x" } })
    assert.strictEqual(invalid.status, 422)
    await call(e, "POST", "/_control/faults", { body: { kind: "status_500", path: "/**", probability: 1 } })
    assert.strictEqual((await call(e, "GET", "/account")).status, 500)
    assert.strictEqual((await call(e, "DELETE", "/_control/faults")).status, 204)
    assert.strictEqual((await call(e, "GET", "/account")).status, 200)
  })
})
