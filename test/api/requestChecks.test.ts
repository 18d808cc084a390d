import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  checkClientId,
  checkCodeVerifier,
  checkFlatten,
  checkHashes,
  checkIdList,
  checkJsonValue,
  checkKinds,
  checkLimit,
  checkStateValue,
  checkTimestamp,
  checkWebhookUrl,
  VALUE_MAX_BYTES
} from "../../src/api/requestChecks.ts"

describe("request checks", () => {
  it("bounds page sizes to integers in 1..max", () => {
    assert.isUndefined(checkLimit(undefined, 100))
    assert.isUndefined(checkLimit(1, 100))
    assert.isUndefined(checkLimit(100, 100))
    for (const bad of [0, 101, -1, 2.5, Number.NaN]) assert.strictEqual(checkLimit(bad, 100)?.field, "limit")
  })

  it("refuses flatten with a non-empty parent_id only", () => {
    assert.strictEqual(checkFlatten(true, "d_1")?.field, "flatten")
    assert.isUndefined(checkFlatten(true, undefined))
    assert.isUndefined(checkFlatten(true, ""))
    assert.isUndefined(checkFlatten(false, "d_1"))
  })

  it("refuses duplicate cache-check hashes, case-insensitively, and empty lists or entries", () => {
    assert.isUndefined(checkHashes(["aa", "bb"]))
    const dup = checkHashes(["aabb", "ccdd", "AABB"])
    assert.strictEqual(dup?.field, "hashes[2]")
    assert.include(dup?.message ?? "", "hashes[0]")
    assert.strictEqual(checkHashes([])?.field, "hashes")
    assert.strictEqual(checkHashes(["aa", " "])?.field, "hashes[1]")
    assert.strictEqual(checkIdList("ids", ["f1", "f1"])?.field, "ids[1]")
  })

  it("accepts only plain JSON objects as app_state values", () => {
    assert.isUndefined(checkStateValue({}))
    assert.isUndefined(checkStateValue({ a: [1, "x", null, { b: true }] }))
    for (const bad of [[], null, "x", 3, false, new Date(), new Map()]) {
      assert.strictEqual(checkStateValue(bad)?.field, "value", String(bad))
    }
    assert.strictEqual(checkStateValue({ a: { b: Number.NaN } })?.field, "value.a.b")
    assert.strictEqual(checkStateValue({ a: [Number.POSITIVE_INFINITY] })?.field, "value.a[0]")
    assert.strictEqual(checkStateValue({ a: undefined })?.field, "value.a")
    assert.strictEqual(checkStateValue({ a: "x\u0000y" })?.field, "value.a")
  })

  it("refuses values over 64 KiB encoded, counting UTF-8 bytes", () => {
    const overhead = JSON.stringify({ s: "" }).length
    assert.isUndefined(checkStateValue({ s: "a".repeat(VALUE_MAX_BYTES - overhead) }))
    assert.include(checkStateValue({ s: "a".repeat(VALUE_MAX_BYTES - overhead + 1) })?.message ?? "", "65536")
    // "é" is 2 bytes in UTF-8: half as many characters already exceed the limit.
    assert.isDefined(checkStateValue({ s: "é".repeat(VALUE_MAX_BYTES / 2) }))
    for (const v of [null, false, 0, "", [], {}]) assert.isUndefined(checkJsonValue(v))
  })

  it("checks code_verifier, client_id, timestamps, kinds and webhook URLs", () => {
    assert.isUndefined(checkCodeVerifier("a".repeat(43)))
    assert.isUndefined(checkCodeVerifier("A-._~".repeat(25) + "abc"))
    assert.isDefined(checkCodeVerifier("a".repeat(42)))
    assert.isDefined(checkCodeVerifier("a".repeat(129)))
    assert.isDefined(checkCodeVerifier(`${"a".repeat(42)}+`))
    assert.isUndefined(checkClientId("1b4e28ba-2fa1-11d2-883f-0016d3cca427"))
    assert.isDefined(checkClientId("dlsync"))
    assert.isUndefined(checkTimestamp("updated_after", "2026-11-22T06:00:00Z"))
    assert.isUndefined(checkTimestamp("updated_after", "2026-11-22T06:00:00.123+02:00"))
    assert.isDefined(checkTimestamp("updated_after", "2026-11-22T06:00:00"))
    assert.isDefined(checkTimestamp("updated_after", "2026-11-22"))
    assert.isDefined(checkKinds([]))
    assert.strictEqual(checkKinds(["video", "a,b"])?.field, "kind[1]")
    assert.isUndefined(checkWebhookUrl("https://hooks.example.com/dl"))
    assert.isDefined(checkWebhookUrl("http://hooks.example.com/dl"))
    assert.isDefined(checkWebhookUrl("https://u:p@hooks.example.com/dl"))
    assert.isDefined(checkWebhookUrl("not a url"))
    for (const local of [
      "https://127.0.0.1/",
      "https://10.1.2.3/hook",
      "https://192.168.1.20:8443/",
      "https://[::1]/",
      "https://[fd00::1]/",
      "https://nas/",
      "https://nas.lan/",
      "https://dlsync.local/",
      "https://hooks.localhost/",
      "https://hooks.example/"
    ]) {
      assert.strictEqual(
        checkWebhookUrl(local)?.message,
        "must name a public host (the service delivers from the Internet)",
        local
      )
    }
    assert.isUndefined(checkWebhookUrl("https://203.0.113.9:8443/"))
    assert.isUndefined(checkWebhookUrl("https://dlsync.example.com/hooks"))
  })
})

describe("request check properties", () => {
  it("a hash list is refused exactly when it has an empty entry or a case-insensitive duplicate", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[0-9a-fA-F]{0,4}$/), { minLength: 1, maxLength: 8 }), (hashes) => {
        const keys = hashes.map((h) => h.toLowerCase())
        const bad = keys.includes("") || new Set(keys).size !== keys.length
        return (checkHashes(hashes) !== undefined) === bad
      })
    )
  })

  it("any JSON object under the size limit is a valid app_state value", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const plain = JSON.parse(JSON.stringify(value))
        const small = Buffer.byteLength(JSON.stringify(plain)) <= VALUE_MAX_BYTES
        const hasNul = strings(plain).some((t) => t.includes("\u0000"))
        return (checkStateValue(plain) === undefined) === (small && !hasNul)
      })
    )
  })
})

/** Every string in a JSON value, object keys included. */
const strings = (v: unknown): Array<string> => {
  if (typeof v === "string") return [v]
  if (Array.isArray(v)) return v.flatMap(strings)
  if (typeof v === "object" && v !== null) return Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)])
  return []
}
