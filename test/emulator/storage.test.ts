import type { IncomingHttpHeaders } from "node:http"
import { describe, expect, it } from "vitest"
import {
  APP_STORAGE_MAX_BYTES,
  APP_STORAGE_MAX_KEYS,
  APP_STORAGE_VALUE_LIMIT_BYTES,
  AppStorage
} from "../../src/emulator/appStorage.ts"
import { makeClock } from "../../src/emulator/clock.ts"
import type { Principal, RouteResult } from "../../src/emulator/http.ts"

const oauth = (userId: string, clientId: string): Principal => ({
  kind: "oauth",
  userId,
  clientId,
  scopes: new Set(["storage:read", "storage:write"])
})

const ME = oauth("usr_a", "app_1")

const req = (body?: unknown, headers: IncomingHttpHeaders = {}) => ({
  headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
  body: body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
})

const view = (result: RouteResult) => {
  if (result.kind === "raw") throw new Error("unexpected raw result")
  return {
    status: result.status,
    body: result.kind === "json" ? result.body : undefined,
    headers: result.headers ?? {}
  }
}

const item = (result: RouteResult): { value: unknown; version: unknown; etag: string } => {
  const { body, headers } = view(result)
  if (typeof body !== "object" || body === null || !("data" in body)) throw new Error("no data")
  const d = body.data
  if (typeof d !== "object" || d === null || !("value" in d) || !("version" in d)) throw new Error("not an item")
  expect(headers.etag).toBeDefined()
  return { value: d.value, version: d.version, etag: headers.etag ?? "" }
}

describe("application storage rules", () => {
  it("rule 'OAuth only': a personal API key gets 403", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const apiKey: Principal = { kind: "apiKey", userId: "usr_a" }
    expect(view(storage.list(apiKey)).status).toBe(403)
    expect(view(storage.get(apiKey, "k", req())).status).toBe(403)
    expect(view(storage.put(apiKey, "k", req({ value: 1 }))).status).toBe(403)
    expect(view(storage.delete(apiKey, "k", req())).status).toBe(403)
  })

  it.each([
    ["{}", {}],
    ["[]", []],
    ["null", null],
    ["false", false],
    ["zero", 0],
    ["the empty string", ""]
  ])("rule 'any JSON value is preserved': %s", (_, value) => {
    const storage = new AppStorage({ clock: makeClock() })
    expect(item(storage.put(ME, "k", req({ value }))).value).toEqual(value)
    expect(item(storage.get(ME, "k", req())).value).toEqual(value)
  })

  it("rule 'PUT without a condition replaces', counting versions", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const a = item(storage.put(ME, "k", req({ value: 1 })))
    const b = item(storage.put(ME, "k", req({ value: 2 })))
    expect([a.version, b.version]).toEqual([1, 2])
    expect(b.etag).not.toBe(a.etag)
    expect(item(storage.get(ME, "k", req())).value).toBe(2)
  })

  it("rule 'If-Match needs the exact strong ETag; a weak validator does not satisfy it'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const { etag } = item(storage.put(ME, "k", req({ value: 1 })))
    expect(etag).toMatch(/^"[^"]+"$/)
    expect(view(storage.put(ME, "k", req({ value: 2 }, { "if-match": `W/${etag}` }))).status).toBe(412)
    expect(view(storage.put(ME, "k", req({ value: 2 }, { "if-match": '"other"' }))).status).toBe(412)
    expect(view(storage.put(ME, "k", req({ value: 2 }, { "if-match": `"x", ${etag}` }))).status).toBe(200)
  })

  it("rule 'If-Match: * checks existence only'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    expect(view(storage.put(ME, "k", req({ value: 1 }, { "if-match": "*" }))).status).toBe(412)
    storage.put(ME, "k", req({ value: 1 }))
    expect(view(storage.put(ME, "k", req({ value: 2 }, { "if-match": "*" }))).status).toBe(200)
  })

  it("rule 'If-None-Match: * creates only when the key is absent'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    expect(view(storage.put(ME, "k", req({ value: 1 }, { "if-none-match": "*" }))).status).toBe(200)
    const again = view(storage.put(ME, "k", req({ value: 2 }, { "if-none-match": "*" })))
    expect(again.status).toBe(412)
    expect(again.body).toMatchObject({ error: { code: "precondition_failed" } })
    expect(item(storage.get(ME, "k", req())).value).toBe(1)
  })

  it("rule 'a deleted and recreated key has a new ETag'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const before = item(storage.put(ME, "k", req({ value: 1 })))
    expect(view(storage.delete(ME, "k", req())).status).toBe(204)
    const after = item(storage.put(ME, "k", req({ value: 1 })))
    expect(after.version).toBe(1)
    expect(after.etag).not.toBe(before.etag)
    expect(view(storage.put(ME, "k", req({ value: 3 }, { "if-match": before.etag }))).status).toBe(412)
  })

  it("rule 'DELETE may use If-Match; success is 204 with no body'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const { etag } = item(storage.put(ME, "k", req({ value: 1 })))
    expect(view(storage.delete(ME, "k", req(undefined, { "if-match": '"stale"' }))).status).toBe(412)
    const ok = storage.delete(ME, "k", req(undefined, { "if-match": etag }))
    expect(ok).toEqual({ kind: "empty", status: 204 })
    expect(view(storage.get(ME, "k", req())).status).toBe(404)
    expect(view(storage.delete(ME, "k", req())).status).toBe(404)
  })

  it("rule 'storage belongs to one user within one OAuth application'", () => {
    const storage = new AppStorage({ clock: makeClock() })
    storage.put(ME, "k", req({ value: "mine" }))
    expect(view(storage.get(oauth("usr_a", "app_2"), "k", req())).status).toBe(404)
    expect(view(storage.get(oauth("usr_b", "app_1"), "k", req())).status).toBe(404)
  })

  it("rule '64 KiB per value': at the limit is stored, beyond is 422", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const fits = "a".repeat(APP_STORAGE_VALUE_LIMIT_BYTES - 2) // plus the two quotes
    expect(view(storage.put(ME, "k", req({ value: fits }))).status).toBe(200)
    const over = view(storage.put(ME, "k", req({ value: `${fits}a` })))
    expect(over.status).toBe(422)
    expect(over.body).toMatchObject({
      error: { code: "validation_failed", details: { fields: { value: [expect.any(String)] } } }
    })
  })

  it("rule '256 keys per user and app': the 257th key is refused with 413, replacing still works", () => {
    const storage = new AppStorage({ clock: makeClock() })
    for (let i = 0; i < APP_STORAGE_MAX_KEYS; i++) {
      expect(view(storage.put(ME, `k${i}`, req({ value: i }))).status).toBe(200)
    }
    const r = view(storage.put(ME, "one-more", req({ value: 0 })))
    expect(r.status).toBe(413)
    expect(r.body).toMatchObject({ error: { code: "storage_quota_exceeded" } })
    expect(view(storage.put(ME, "k0", req({ value: "replaced" }))).status).toBe(200)
    expect(view(storage.put(oauth("usr_a", "app_2"), "one-more", req({ value: 0 }))).status).toBe(200)
  })

  it("rule '5 MiB per user and app': a write that would pass it is refused with 413", () => {
    const storage = new AppStorage({ clock: makeClock() })
    const big = "x".repeat(60_000)
    let stored = 0
    while (view(storage.put(ME, `k${stored}`, req({ value: big }))).status === 200) stored++
    const list = view(storage.list(ME))
    expect(list.body).toMatchObject({ meta: { quota: { keys_used: stored, bytes_limit: APP_STORAGE_MAX_BYTES } } })
    const used = stored * (60_002 + `k${stored}`.length)
    expect(used).toBeLessThanOrEqual(APP_STORAGE_MAX_BYTES)
    expect(used + 60_002 + 4).toBeGreaterThan(APP_STORAGE_MAX_BYTES)
  })

  it("GET /app-storage lists the namespace by key with meta.quota", () => {
    const storage = new AppStorage({ clock: makeClock() })
    storage.put(ME, "b", req({ value: [] }))
    storage.put(ME, "a", req({ value: null }))
    const r = view(storage.list(ME))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      data: [
        { key: "a", value: null, version: 1 },
        { key: "b", value: [], version: 1 }
      ],
      meta: { quota: { keys_used: 2, keys_limit: 256, bytes_used: 1 + 4 + 1 + 2 } }
    })
  })

  it("validates the body: {value} required (422), JSON (400), application/json (415), non-finite numbers (422)", () => {
    const storage = new AppStorage({ clock: makeClock() })
    expect(view(storage.put(ME, "k", req({ other: 1 }))).status).toBe(422)
    expect(view(storage.put(ME, "k", req("{"))).status).toBe(400)
    expect(view(storage.put(ME, "k", { headers: {}, body: Buffer.from('{"value":1}') })).status).toBe(415)
    expect(view(storage.put(ME, "k", req('{"value":1e999}'))).status).toBe(422)
    expect(view(storage.put(ME, "", req({ value: 1 }))).status).toBe(422)
  })
})
