import { assert, describe, it } from "@effect/vitest"
import { errorCodes, provablyNeverSent } from "../../src/api/neverSent.ts"

const sysError = (code: string, cause?: unknown) => Object.assign(new Error(code, { cause }), { code })

describe("provablyNeverSent", () => {
  it("is true for refused connections and DNS failures, however deeply wrapped", () => {
    assert.isTrue(provablyNeverSent(sysError("ECONNREFUSED")))
    assert.isTrue(provablyNeverSent(new TypeError("fetch failed", { cause: sysError("ENOTFOUND") })))
    assert.isTrue(provablyNeverSent(new AggregateError([sysError("ECONNREFUSED"), sysError("ECONNREFUSED")])))
    assert.isTrue(provablyNeverSent(sysError("UND_ERR_CONNECT_TIMEOUT")))
  })

  it("is false when the request may have been sent, or when nothing says so", () => {
    for (const e of [
      sysError("ECONNRESET"),
      sysError("EPIPE"),
      sysError("UND_ERR_SOCKET"),
      sysError("UND_ERR_HEADERS_TIMEOUT"),
      new AggregateError([sysError("ECONNREFUSED"), sysError("ECONNRESET")]),
      new Error("mystery"),
      undefined,
      "ECONNREFUSED"
    ]) {
      assert.isFalse(provablyNeverSent(e), String(e))
    }
  })

  it("survives cause cycles", () => {
    const a: Error & { cause?: unknown; code?: string } = new Error("a")
    a.code = "ECONNREFUSED"
    a.cause = a
    assert.deepStrictEqual(errorCodes(a), ["ECONNREFUSED"])
  })
})
