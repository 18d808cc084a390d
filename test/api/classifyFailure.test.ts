import { assert, describe, it } from "@effect/vitest"
import { classifyFailure, type FailedResponse } from "../../src/api/classifyFailure.ts"

const NOW = Date.UTC(2026, 10, 22, 6, 0, 0)

const classify = (status: number, body: unknown, extra: Partial<FailedResponse> = {}) =>
  classifyFailure({
    status,
    body,
    requestId: "req-1",
    retryAfter: undefined,
    wwwAuthenticate: undefined,
    target: "api",
    sentCursor: false,
    nowMs: NOW,
    ...extra
  })

const envelope = (code: string, message = "msg", fields?: Record<string, Array<string>>) => ({
  error: { code, message, ...(fields ? { details: { fields } } : {}) }
})

describe("classifyFailure", () => {
  it("maps each status of the spec to its reason, keeping status, code, message and request id", () => {
    const cases: ReadonlyArray<[number, string]> = [
      [400, "Validation"],
      [401, "Unauthorized"],
      [402, "PaymentRequired"],
      [403, "Forbidden"],
      [404, "NotFound"],
      [408, "Server"],
      [409, "Conflict"],
      [412, "Precondition"],
      [413, "Validation"],
      [415, "Validation"],
      [422, "Validation"],
      [425, "Server"],
      [429, "RateLimited"],
      [500, "Server"],
      [503, "Server"],
      [599, "Server"],
      [405, "Unexpected"],
      [418, "Unexpected"]
    ]
    for (const [status, tag] of cases) {
      const reason = classify(status, envelope("some_code", "the message"))
      assert.strictEqual(reason._tag, tag, `status ${status}`)
      assert.strictEqual("status" in reason ? reason.status : undefined, status)
      assert.strictEqual("requestId" in reason ? reason.requestId : undefined, "req-1")
      assert.strictEqual(reason.message, "the message")
      assert.strictEqual("code" in reason ? reason.code : undefined, "some_code")
    }
  })

  it("tells cursor_expired from any other 410", () => {
    assert.strictEqual(classify(410, envelope("cursor_expired"))._tag, "CursorExpired")
    assert.strictEqual(classify(410, envelope("gone_for_good"))._tag, "Unexpected")
  })

  it("reads a 422 about the sent cursor as InvalidCursor, other 422s as Validation with fields", () => {
    assert.strictEqual(
      classify(422, envelope("validation_failed", "m", { cursor: ["altered"] }), { sentCursor: true })._tag,
      "InvalidCursor"
    )
    assert.strictEqual(classify(422, envelope("invalid_cursor"), { sentCursor: true })._tag, "InvalidCursor")
    assert.strictEqual(classify(422, undefined, { sentCursor: true })._tag, "InvalidCursor")
    const v = classify(422, envelope("validation_failed", "m", { limit: ["too big"] }), { sentCursor: true })
    assert.strictEqual(v._tag, "Validation")
    assert.deepStrictEqual(v._tag === "Validation" ? v.fields : {}, { limit: ["too big"] })
    assert.strictEqual(classify(422, envelope("validation_failed", "m", { cursor: ["x"] }))._tag, "Validation")
  })

  it("keeps Retry-After on 429 (seconds or date) and omits an unusable one", () => {
    const secs = classify(429, undefined, { retryAfter: "30" })
    assert.strictEqual(secs._tag === "RateLimited" ? secs.retryAfterMillis : -1, 30_000)
    const date = classify(429, undefined, { retryAfter: "Sun, 22 Nov 2026 06:00:10 GMT" })
    assert.strictEqual(date._tag === "RateLimited" ? date.retryAfterMillis : -1, 10_000)
    const junk = classify(429, undefined, { retryAfter: "later" })
    assert.isTrue(junk._tag === "RateLimited" && junk.retryAfterMillis === undefined)
  })

  it("classifies by status when the body is not an envelope (a proxy's HTML page)", () => {
    const r = classify(502, "<html>Bad gateway</html>")
    assert.strictEqual(r._tag, "Server")
    assert.strictEqual(r.message, "server error")
    assert.isFalse("code" in r && r.code !== undefined)
    assert.strictEqual(classify(404, undefined)._tag, "NotFound")
  })

  it("keeps the WWW-Authenticate challenge of a 401", () => {
    const r = classify(401, envelope("unauthenticated"), { wwwAuthenticate: 'Bearer error="invalid_token"' })
    assert.strictEqual(r._tag === "Unauthorized" ? r.challenge : undefined, 'Bearer error="invalid_token"')
  })

  it("reads OAuth error objects at auth_url, with message and hint", () => {
    const r = classify(400, { error: "slow_down", message: "poll slower" }, { target: "auth" })
    assert.strictEqual(r._tag, "OAuth")
    assert.strictEqual(r._tag === "OAuth" ? r.error : "", "slow_down")
    assert.strictEqual(r.message, "poll slower")
    const h = classify(400, { error: "unsupported_grant_type", hint: "check grant_type" }, { target: "auth" })
    assert.strictEqual(h._tag === "OAuth" ? h.hint : "", "check grant_type")
    const c = classify(401, { error: "invalid_client" }, { target: "auth" })
    assert.strictEqual(c._tag === "OAuth" ? c.status : 0, 401)
    assert.strictEqual(classify(429, { error: "slow_down" }, { target: "auth", retryAfter: "60" })._tag, "RateLimited")
    assert.strictEqual(classify(400, "<html/>", { target: "auth" })._tag, "Validation")
  })
})
