import type { IncomingHttpHeaders } from "node:http"
import { describe, expect, it } from "vitest"
import type { EmulatorClock } from "../../src/emulator/clock.ts"
import { FILE_STATE_VALUE_LIMIT_BYTES, FileStateStore } from "../../src/emulator/fileState.ts"
import type { Principal, RouteResult } from "../../src/emulator/http.ts"

const manualClock = (): EmulatorClock => {
  let ms = 1_800_000_000_000
  let last = 0
  return {
    nowMs: () => ms,
    tick: () => {
      last = Math.max(last + 1, ms * 1000)
      return last
    },
    advance: (d) => {
      ms += d
    }
  }
}

const oauth = (userId: string, clientId: string): Principal => ({
  kind: "oauth",
  userId,
  clientId,
  scopes: new Set(["files:read", "storage:read", "storage:write"])
})

const ALICE = oauth("usr_a", "app_1")
const ALICE_OTHER_APP = oauth("usr_a", "app_2")
const BOB = oauth("usr_b", "app_1")

const setup = (requestsPerMinute?: number) => {
  const clock = manualClock()
  const files = new Map<string, string>([
    ["f1", "usr_a"],
    ["f2", "usr_a"],
    ["fb", "usr_b"]
  ])
  const store = new FileStateStore({
    clock,
    files: { isAccessible: (userId, id) => files.get(id) === userId },
    ...(requestsPerMinute === undefined ? {} : { requestsPerMinute })
  })
  return { clock, files, store }
}

const req = (body?: unknown, headers: IncomingHttpHeaders = {}) => ({
  headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
  body: body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
})

const view = (result: RouteResult) => {
  if (result.kind === "raw") throw new Error("unexpected raw result")
  const body = result.kind === "json" ? result.body : undefined
  return { status: result.status, body, headers: result.headers ?? {} }
}

const data = (result: RouteResult): Record<string, unknown> => {
  const { body } = view(result)
  if (typeof body !== "object" || body === null || !("data" in body)) throw new Error("no data")
  const d = body.data
  if (typeof d !== "object" || d === null) throw new Error("data is not an object")
  return Object.fromEntries(Object.entries(d))
}

const errorCode = (result: RouteResult): unknown => {
  const { body } = view(result)
  return typeof body === "object" && body !== null && "error" in body && typeof body.error === "object"
    ? body.error && "code" in body.error
      ? body.error.code
      : undefined
    : undefined
}

describe("file state rules", () => {
  it("rule 'OAuth only': a personal API key gets 403", () => {
    const { store } = setup()
    const apiKey: Principal = { kind: "apiKey", userId: "usr_a" }
    expect(view(store.get(apiKey, "f1", req())).status).toBe(403)
    expect(view(store.put(apiKey, "f1", req({ value: {} }))).status).toBe(403)
    expect(view(store.delete(apiKey, "f1", req())).status).toBe(403)
  })

  it("rule 'GET without state': 200 with data null and no ETag", () => {
    const { store } = setup()
    const r = view(store.get(ALICE, "f1", req()))
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ data: null })
    expect(r.headers.etag).toBeUndefined()
  })

  it("rule 'PUT value': an object is stored whole ({} too) with version, quoted ETag and timestamps", () => {
    const { store } = setup()
    const created = store.put(ALICE, "f1", req({ value: { pos: 12, tags: ["a"] } }))
    expect(view(created).status).toBe(200)
    const state = data(created)
    expect(state).toMatchObject({ value: { pos: 12, tags: ["a"] }, version: 1 })
    expect(state.etag).toMatch(/^"[^"]+"$/)
    expect(view(created).headers.etag).toBe(state.etag)
    expect(typeof state.created_at).toBe("string")
    const replaced = data(store.put(ALICE, "f1", req({ value: {} })))
    expect(replaced).toMatchObject({ value: {}, version: 2, created_at: state.created_at })
    expect(data(store.get(ALICE, "f1", req()))).toEqual(replaced)
  })

  it("rule 'ETag never derived from version': equal versions on two resources have different ETags", () => {
    const { store } = setup()
    const a = data(store.put(ALICE, "f1", req({ value: { x: 1 } })))
    const b = data(store.put(ALICE, "f2", req({ value: { x: 1 } })))
    expect(a.version).toBe(b.version)
    expect(a.etag).not.toBe(b.etag)
    store.delete(ALICE, "f1", req())
    const again = data(store.put(ALICE, "f1", req({ value: { x: 1 } })))
    expect(again.version).toBe(1)
    expect(again.etag).not.toBe(a.etag)
  })

  it.each([
    ["an array", []],
    ["a string", "x"],
    ["a number", 3],
    ["null", null],
    ["false", false]
  ])("rule 'value must be an object': %s is a 422 validation error", (_, value) => {
    const { store } = setup()
    const r = store.put(ALICE, "f1", req({ value }))
    expect(view(r).status).toBe(422)
    expect(errorCode(r)).toBe("validation_failed")
    expect(view(r).body).toMatchObject({ error: { details: { fields: { value: [expect.any(String)] } } } })
  })

  it("rule 'null bytes and non-finite numbers are rejected'", () => {
    const { store } = setup()
    expect(view(store.put(ALICE, "f1", req('{"value":{"a":"x\\u0000y"}}'))).status).toBe(422)
    expect(view(store.put(ALICE, "f1", req('{"value":{"a\\u0000":1}}'))).status).toBe(422)
    expect(view(store.put(ALICE, "f1", req('{"value":{"a":1e999}}'))).status).toBe(422)
    expect(view(store.put(ALICE, "f1", req('{"value":{"a":[-1e400]}}'))).status).toBe(422)
    expect(view(store.get(ALICE, "f1", req())).body).toEqual({ data: null })
  })

  it("rule '65,536 encoded UTF-8 bytes per value': at the limit is stored, one byte more is 422", () => {
    const { store } = setup()
    // {"s":"…"} is 8 bytes of framing; "é" is 2 bytes in UTF-8
    const fits = { s: "é".repeat((FILE_STATE_VALUE_LIMIT_BYTES - 8) / 2) }
    expect(Buffer.byteLength(JSON.stringify(fits))).toBe(FILE_STATE_VALUE_LIMIT_BYTES)
    expect(view(store.put(ALICE, "f1", req({ value: fits }))).status).toBe(200)
    const over = { s: `${fits.s}a` }
    const r = store.put(ALICE, "f1", req({ value: over }))
    expect(view(r).status).toBe(422)
    expect(errorCode(r)).toBe("validation_failed")
  })

  it("rule '512 KiB raw body ceiling': a larger body is 413 before it is parsed", () => {
    const { store } = setup()
    const body = `{"value":{}}${" ".repeat(512 * 1024)}`
    expect(view(store.put(ALICE, "f1", req(body))).status).toBe(413)
    // escapes inflate the raw body but not the value: this body is > 64 KiB and still accepted
    const escaped = `{"value":{"s":"${"\\u0041".repeat(20_000)}"}}`
    expect(view(store.put(ALICE, "f1", req(escaped))).status).toBe(200)
  })

  it("rejects a body that is not JSON (400) or not sent as application/json (415)", () => {
    const { store } = setup()
    expect(view(store.put(ALICE, "f1", req("{nope"))).status).toBe(400)
    const plain = { headers: { "content-type": "text/plain" }, body: Buffer.from('{"value":{}}') }
    expect(view(store.put(ALICE, "f1", plain)).status).toBe(415)
  })

  it("rule 'If-Match with the full quoted ETag': a match writes, a mismatch gives 412", () => {
    const { store } = setup()
    const first = data(store.put(ALICE, "f1", req({ value: { n: 1 } })))
    const etag = String(first.etag)
    const second = data(store.put(ALICE, "f1", req({ value: { n: 2 } }, { "if-match": etag })))
    expect(second.version).toBe(2)
    const stale = store.put(ALICE, "f1", req({ value: { n: 3 } }, { "if-match": etag }))
    expect(view(stale).status).toBe(412)
    expect(errorCode(stale)).toBe("precondition_failed")
    const unquoted = store.put(ALICE, "f1", req({ value: { n: 3 } }, { "if-match": etag.slice(1, -1) }))
    expect(view(unquoted).status).toBe(412)
    expect(data(store.get(ALICE, "f1", req())).value).toEqual({ n: 2 })
  })

  it("rule 'If-None-Match: * is create-only'", () => {
    const { store } = setup()
    expect(view(store.put(ALICE, "f1", req({ value: { a: 1 } }, { "if-none-match": "*" }))).status).toBe(200)
    expect(view(store.put(ALICE, "f1", req({ value: { a: 2 } }, { "if-none-match": "*" }))).status).toBe(412)
    const withIfMatch = store.put(ALICE, "f2", req({ value: {} }, { "if-match": '"whatever"' }))
    expect(view(withIfMatch).status).toBe(412)
  })

  it("rule 'without a condition the last write wins'", () => {
    const { store } = setup()
    store.put(ALICE, "f1", req({ value: { by: "one" } }))
    store.put(ALICE, "f1", req({ value: { by: "two" } }))
    expect(data(store.get(ALICE, "f1", req())).value).toEqual({ by: "two" })
  })

  it("rule 'state per user, OAuth client and resource': apps and users never see each other's state", () => {
    const { store } = setup()
    store.put(ALICE, "f1", req({ value: { app: 1 } }))
    expect(view(store.get(ALICE_OTHER_APP, "f1", req())).body).toEqual({ data: null })
    store.put(ALICE_OTHER_APP, "f1", req({ value: { app: 2 } }))
    expect(data(store.get(ALICE, "f1", req())).value).toEqual({ app: 1 })
    expect(store.lookup("usr_a", "app_2", "f1")?.value).toEqual({ app: 2 })
    expect(store.lookup("usr_a", "app_1", "f2")).toBeNull()
  })

  it("rule '404 for a missing, deleted or another user's resource'", () => {
    const { store, files } = setup()
    expect(view(store.get(ALICE, "nope", req())).status).toBe(404)
    expect(view(store.get(ALICE, "fb", req())).status).toBe(404)
    expect(view(store.put(ALICE, "fb", req({ value: {} }))).status).toBe(404)
    expect(view(store.delete(ALICE, "fb", req())).status).toBe(404)
    store.put(BOB, "fb", req({ value: { mine: true } }))
    files.delete("fb")
    expect(view(store.get(BOB, "fb", req())).status).toBe(404)
  })

  it("rule 'DELETE clears only the calling app's state, 204 even if none, If-Match can give 412'", () => {
    const { store } = setup()
    expect(view(store.delete(ALICE, "f1", req())).status).toBe(204)
    const mine = data(store.put(ALICE, "f1", req({ value: { a: 1 } })))
    store.put(ALICE_OTHER_APP, "f1", req({ value: { b: 1 } }))
    expect(view(store.delete(ALICE, "f1", req({}, { "if-match": '"stale"' }))).status).toBe(412)
    expect(view(store.delete(ALICE, "f1", req(undefined, { "if-match": String(mine.etag) }))).status).toBe(204)
    expect(view(store.get(ALICE, "f1", req())).body).toEqual({ data: null })
    expect(data(store.get(ALICE_OTHER_APP, "f1", req())).value).toEqual({ b: 1 })
    expect(view(store.delete(ALICE, "f1", req(undefined, { "if-match": String(mine.etag) }))).status).toBe(412)
  })

  it("rule 'file deletion removes all apps' state, descendants included; new copies start empty'", () => {
    const { store, files } = setup()
    store.put(ALICE, "f1", req({ value: { a: 1 } }))
    store.put(ALICE_OTHER_APP, "f2", req({ value: { a: 2 } }))
    store.removeResources(["f1", "f2"])
    expect(store.lookup("usr_a", "app_1", "f1")).toBeNull()
    expect(store.lookup("usr_a", "app_2", "f2")).toBeNull()
    expect(view(store.get(ALICE, "f1", req())).body).toEqual({ data: null })
    files.set("f3", "usr_a")
    expect(view(store.get(ALICE, "f3", req())).body).toEqual({ data: null })
  })

  it("rule 'state updates do not change file timestamps': the state carries its own", () => {
    const { store, clock } = setup()
    const first = data(store.put(ALICE, "f1", req({ value: {} })))
    clock.advance(5000)
    const second = data(store.put(ALICE, "f1", req({ value: { b: 1 } })))
    expect(second.created_at).toBe(first.created_at)
    expect(String(second.updated_at) > String(first.updated_at)).toBe(true)
  })

  it("answers a conditional GET with 304 when If-None-Match holds the current ETag", () => {
    const { store } = setup()
    const { etag } = data(store.put(ALICE, "f1", req({ value: {} })))
    const r = view(store.get(ALICE, "f1", req(undefined, { "if-none-match": String(etag) })))
    expect([r.status, r.body, r.headers.etag]).toEqual([304, undefined, etag])
  })

  it("rule '1,200 requests per minute per user and app, across tokens': 429 with Retry-After", () => {
    const { store, clock } = setup()
    for (let i = 0; i < 1200; i++) {
      expect(view(store.get(i % 2 === 0 ? ALICE : oauth("usr_a", "app_1"), "f1", req())).status).toBe(200)
      if (i === 599) clock.advance(30_000)
    }
    const limited = view(store.put(ALICE, "f1", req({ value: {} })))
    expect(limited.status).toBe(429)
    expect(limited.headers["retry-after"]).toBe("30")
    // another app of the same user has its own budget
    expect(view(store.get(ALICE_OTHER_APP, "f1", req())).status).toBe(200)
    clock.advance(30_000)
    expect(view(store.get(ALICE, "f1", req())).status).toBe(200)
  })
})
