import { assert, describe, it } from "vitest"
import { responseRequestId } from "../../src/emulator/pipeline.ts"
import { call, emulator } from "./helpers.ts"
import { decode, ErrorEnvelope } from "./schemas.ts"

describe("X-Request-ID", () => {
  it("echoes a valid incoming id on every response, errors included", async () => {
    const e = await emulator()
    const ok = await call(e, "GET", "/account", { headers: { "X-Request-ID": "trace-42" } })
    assert.strictEqual(ok.status, 200)
    assert.strictEqual(ok.headers.get("x-request-id"), "trace-42")
    const missing = await call(e, "GET", "/nope", { headers: { "X-Request-ID": "x".repeat(100) } })
    assert.strictEqual(missing.status, 404)
    assert.strictEqual(missing.headers.get("x-request-id"), "x".repeat(100))
  })

  it("generates a fresh id when none or an invalid one is sent", async () => {
    const e = await emulator()
    const a = await call(e, "GET", "/account")
    const b = await call(e, "GET", "/account", { headers: { "X-Request-ID": "y".repeat(101) } })
    const ida = a.headers.get("x-request-id")
    const idb = b.headers.get("x-request-id")
    assert.match(ida ?? "", /^req_[0-9a-f]{24}$/)
    assert.match(idb ?? "", /^req_[0-9a-f]{24}$/)
    assert.notStrictEqual(ida, idb)
    assert.match(responseRequestId("has space"), /^req_/)
    assert.strictEqual(responseRequestId("a"), "a")
  })

  it("is also set by the CDN origin", async () => {
    const e = await emulator()
    const response = await fetch(`${e.cdnUrl}/dl/x/y?expires=1&sig=z`, { headers: { "X-Request-ID": "cdn-1" } })
    assert.strictEqual(response.headers.get("x-request-id"), "cdn-1")
  })
})

describe("routing", () => {
  it("answers an unknown route with 404 in the error envelope", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/no/such/route")
    assert.strictEqual(result.status, 404)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "not_found")
  })

  it("treats //x as a path, not another host", async () => {
    const e = await emulator()
    const response = await fetch(`${e.authUrl}//api/v1/account`, { headers: { Authorization: `Bearer ${e.apiKey}` } })
    assert.strictEqual(response.status, 404)
  })

  it("answers a wrong method with 405 and Allow", async () => {
    const e = await emulator()
    const result = await call(e, "DELETE", "/files/changes")
    assert.strictEqual(result.status, 405)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "method_not_allowed")
    assert.include(result.headers.get("allow") ?? "", "GET")
  })

  it("prefers a literal segment over a parameter (/files/changes is not /files/{file})", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/files/changes", { token: e.apiKey })
    assert.strictEqual(result.status, 403)
  })

  it("refuses a body over 8 MiB with 413", async () => {
    const e = await emulator()
    const result = await call(e, "POST", "/files/folder", {
      body: JSON.stringify({ name: "x".repeat(9 * 1024 * 1024) })
    })
    assert.strictEqual(result.status, 413)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "payload_too_large")
  })

  it("answers HEAD like GET without a body", async () => {
    const e = await emulator()
    const response = await fetch(`${e.baseUrl}/account`, {
      method: "HEAD",
      headers: { Authorization: `Bearer ${e.apiKey}` }
    })
    assert.strictEqual(response.status, 200)
    assert.strictEqual(await response.text(), "")
    assert.isTrue(Number(response.headers.get("content-length")) > 0)
  })

  it("checks the JSON content type (415) and syntax (400)", async () => {
    const e = await emulator()
    const wrongType = await call(e, "POST", "/files/folder", {
      body: '{"name":"a"}',
      headers: { "Content-Type": "text/plain" }
    })
    assert.strictEqual(wrongType.status, 415)
    const broken = await call(e, "POST", "/files/folder", { body: '{"name":' })
    assert.strictEqual(broken.status, 400)
    assert.strictEqual(decode(ErrorEnvelope, broken.json).error.code, "invalid_json")
  })
})

describe("authentication rules", () => {
  it("401 with WWW-Authenticate when the bearer is missing", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/account", { token: null })
    assert.strictEqual(result.status, 401)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "unauthorized")
    assert.match(result.headers.get("www-authenticate") ?? "", /^Bearer /)
  })

  it("401 with error=invalid_token for an unknown bearer", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/account", { token: "dls_not-a-key" })
    assert.strictEqual(result.status, 401)
    assert.include(result.headers.get("www-authenticate") ?? "", 'error="invalid_token"')
  })

  it("accepts a personal API key (dls_ prefix) and an OAuth token on account, services and files", async () => {
    const e = await emulator()
    assert.match(e.apiKey, /^dls_/)
    for (const path of ["/account", "/services", "/files"]) {
      assert.strictEqual((await call(e, "GET", path, { token: e.apiKey })).status, 200, path)
      assert.strictEqual((await call(e, "GET", path)).status, 200, path)
    }
  })

  it("the change feed refuses a personal API key with 403 in the envelope", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/files/changes", { token: e.apiKey })
    assert.strictEqual(result.status, 403)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "forbidden")
  })

  it("the change-feed rule can be relaxed by an option, never by default", async () => {
    const e = await emulator({ allowApiKeyChanges: true })
    assert.strictEqual((await call(e, "GET", "/files/changes", { token: e.apiKey })).status, 200)
  })

  it("403 insufficient_scope for an OAuth token without the route's scope", async () => {
    const e = await emulator()
    const token = e.context.tokens.issue(e.state.primaryUser.id, e.clientId, ["files:read"]).accessToken
    const account = await call(e, "GET", "/account", { token })
    assert.strictEqual(account.status, 403)
    assert.strictEqual(decode(ErrorEnvelope, account.json).error.code, "insufficient_scope")
    assert.include(account.headers.get("www-authenticate") ?? "", 'scope="user:read"')
    assert.strictEqual((await call(e, "GET", "/files", { token })).status, 200)
    const services = await call(e, "GET", "/services", { token })
    assert.strictEqual(services.status, 403)
  })

  it("include_state needs OAuth with files:read and storage:read", async () => {
    const e = await emulator()
    assert.strictEqual((await call(e, "GET", "/files?include_state=true", { token: e.apiKey })).status, 403)
    const filesOnly = e.context.tokens.issue(e.state.primaryUser.id, e.clientId, ["files:read"]).accessToken
    assert.strictEqual((await call(e, "GET", "/files?include_state=true", { token: filesOnly })).status, 403)
    assert.strictEqual((await call(e, "GET", "/files?include_state=true")).status, 200)
  })
})
