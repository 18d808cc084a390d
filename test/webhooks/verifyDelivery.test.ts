/**
 * Delivery verification against the Standard Webhooks test vector and, both ways, against
 * the `standardwebhooks` package (sign with one, verify with the other), over random
 * secrets, ids and bodies.
 */
import { createHmac, randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Webhook } from "standardwebhooks"
import { strictBase64, webhookKey } from "../../src/domain/WebhookSecret.ts"
import { TOLERANCE_SECONDS, type Verdict, verifyDelivery } from "../../src/webhooks/verifyDelivery.ts"

const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: "1614265330",
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
}

const key = (secret: string) => webhookKey(secret) ?? assert.fail(`not a secret: ${secret}`)

const verify = (
  overrides: {
    id?: string | undefined
    timestamp?: string | undefined
    signature?: string | undefined
    body?: string | Uint8Array
    secrets?: string[]
  },
  nowSeconds = Number(VECTOR.timestamp)
): Verdict =>
  verifyDelivery({
    headers: {
      id: "id" in overrides ? overrides.id : VECTOR.id,
      timestamp: "timestamp" in overrides ? overrides.timestamp : VECTOR.timestamp,
      signature: "signature" in overrides ? overrides.signature : VECTOR.signature
    },
    body: typeof overrides.body === "object" ? overrides.body : Buffer.from(overrides.body ?? VECTOR.body),
    keys: (overrides.secrets ?? [VECTOR.secret]).map(key),
    nowSeconds
  })

const rejection = (verdict: Verdict) => (verdict._tag === "Rejected" ? `${verdict.status} ${verdict.reason}` : "ok")

describe("verifyDelivery", () => {
  it("verifies the Standard Webhooks test vector", () => {
    assert.deepStrictEqual(verify({}), { _tag: "Verified", id: VECTOR.id, timestamp: 1614265330 })
  })

  it("refuses a signature of another body, id, timestamp or secret", () => {
    assert.strictEqual(rejection(verify({ body: '{"test": 2432232315}' })), "401 signature does not match")
    assert.strictEqual(rejection(verify({ body: '{"test":2432232314}' })), "401 signature does not match")
    assert.strictEqual(rejection(verify({ id: "msg_p5jXN8AQM9LWM0D4loKWxJeK" })), "401 signature does not match")
    assert.strictEqual(rejection(verify({ timestamp: "1614265331" })), "401 signature does not match")
    const other = `whsec_${randomBytes(24).toString("base64")}`
    assert.strictEqual(rejection(verify({ secrets: [other] })), "401 signature does not match")
  })

  it("accepts any matching entry among several, under any configured secret (rotation)", () => {
    const stale = `v1,${randomBytes(32).toString("base64")}`
    const other = `whsec_${randomBytes(32).toString("base64")}`
    assert.strictEqual(verify({ signature: `${stale} ${VECTOR.signature}` })._tag, "Verified")
    assert.strictEqual(verify({ signature: `${VECTOR.signature} ${stale}` })._tag, "Verified")
    assert.strictEqual(verify({ signature: `v2,abc ${VECTOR.signature}` })._tag, "Verified")
    assert.strictEqual(verify({ secrets: [other, VECTOR.secret] })._tag, "Verified", "old and new secret configured")
    assert.strictEqual(verify({ secrets: [VECTOR.secret, other] })._tag, "Verified")
    assert.strictEqual(rejection(verify({ signature: stale })), "401 signature does not match")
  })

  it("only v1 entries in strict base64 count", () => {
    const sig = VECTOR.signature.slice(3)
    for (const signature of [
      `v2,${sig}`,
      `V1,${sig}`,
      `v1 ${sig}`,
      `v1,${sig.replace(/=$/, "")}`,
      `v1,${sig.replace(/\+/g, "-").replace(/\//g, "_")}`,
      `v1,${sig} `.trim().replace(",", ", "),
      `v1,${sig.slice(0, 20)}\n${sig.slice(20)}`,
      "v1,",
      "v1"
    ]) {
      assert.strictEqual(verify({ signature })._tag, "Rejected", signature)
    }
  })

  it("a timestamp within five minutes either way passes; one beyond is refused", () => {
    const t = Number(VECTOR.timestamp)
    assert.strictEqual(verify({}, t + TOLERANCE_SECONDS)._tag, "Verified", "five minutes old")
    assert.strictEqual(verify({}, t - TOLERANCE_SECONDS)._tag, "Verified", "five minutes ahead")
    const stale = "400 webhook-timestamp is more than five minutes from this host's clock"
    assert.strictEqual(rejection(verify({}, t + TOLERANCE_SECONDS + 1)), stale)
    assert.strictEqual(rejection(verify({}, t - TOLERANCE_SECONDS - 1)), stale)
  })

  it("refuses malformed timestamps before any signature check", () => {
    const malformed = "400 missing or malformed webhook-timestamp (whole seconds expected)"
    for (const timestamp of [
      "1e9",
      " 1614265330",
      "1614265330 ",
      "0x603811f2",
      "1614265330.0",
      "1614265330.5",
      "+1614265330",
      "-1614265330",
      "01614265330",
      "",
      "1_614_265_330",
      "１６１４２６５３３０",
      "99999999999999999999"
    ]) {
      assert.strictEqual(rejection(verify({ timestamp })), malformed, JSON.stringify(timestamp))
    }
    assert.strictEqual(rejection(verify({ timestamp: undefined })), malformed)
  })

  it("refuses missing or malformed ids and a missing signature", () => {
    const badId = "400 missing or malformed webhook-id"
    for (const id of [undefined, "", "msg with space", "msg_é", "x".repeat(257)]) {
      assert.strictEqual(rejection(verify({ id })), badId, String(id))
    }
    assert.strictEqual(rejection(verify({ signature: undefined })), "400 missing webhook-signature")
    assert.strictEqual(rejection(verify({ signature: "  " })), "400 missing webhook-signature")
  })

  it("signs the raw body bytes, not a re-encoding of them", () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`
    // Not UTF-8: decoding and re-encoding the body would change these bytes.
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x7d])
    const nowSeconds = 1_700_000_000
    const [, signature] = signRaw(secret, "msg_raw", nowSeconds, raw)
    const verdict = verifyDelivery({
      headers: { id: "msg_raw", timestamp: String(nowSeconds), signature: `v1,${signature}` },
      body: raw,
      keys: [key(secret)],
      nowSeconds
    })
    assert.strictEqual(verdict._tag, "Verified")
    assert.strictEqual(
      verifyDelivery({
        headers: { id: "msg_raw", timestamp: String(nowSeconds), signature: `v1,${signature}` },
        body: Buffer.from(raw.toString("utf8")),
        keys: [key(secret)],
        nowSeconds
      })._tag,
      "Rejected"
    )
  })
})

describe("webhook secrets", () => {
  it("are whsec_ + strict base64 of at least one byte", () => {
    assert.isDefined(webhookKey(VECTOR.secret))
    assert.strictEqual(webhookKey(VECTOR.secret)?.length, 24)
    for (const bad of [
      "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "whsec_",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ",
      " whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_",
      "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "whsec_QQ",
      "whsec_QR=="
    ]) {
      assert.isUndefined(webhookKey(bad), bad)
    }
    assert.isDefined(webhookKey("whsec_QQ=="), "one byte, canonical")
  })

  it("strict base64 decodes exactly the canonical encodings", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = Buffer.from(bytes).toString("base64")
        const decoded = strictBase64(text)
        return decoded !== undefined && Buffer.from(decoded).equals(Buffer.from(bytes))
      })
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 48 }), (text) => {
        const decoded = strictBase64(text)
        return decoded === undefined || Buffer.from(decoded).toString("base64") === text
      })
    )
  })
})

describe("cross-check with the standardwebhooks package", () => {
  const secretArb = fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((b) => `whsec_${Buffer.from(b).toString("base64")}`)
  const idArb = fc.stringMatching(/^[\x21-\x7e]{1,40}$/)
  // The package signs a string's UTF-8 bytes: bodies are any text.
  const bodyArb = fc.string({ unit: "grapheme", maxLength: 300 })
  const timeArb = fc.integer({ min: 1_000_000_000, max: 4_000_000_000 })

  it("what it signs, we verify", () => {
    fc.assert(
      fc.property(secretArb, idArb, bodyArb, timeArb, (secret, id, body, seconds) => {
        const signature = new Webhook(secret).sign(id, new Date(seconds * 1000), body)
        const verdict = verifyDelivery({
          headers: { id, timestamp: String(seconds), signature },
          body: Buffer.from(body, "utf8"),
          keys: [key(secret)],
          nowSeconds: seconds
        })
        return verdict._tag === "Verified" && verdict.id === id
      })
    )
  })

  it("what we would accept as signed, it verifies; a different secret neither does", () => {
    fc.assert(
      fc.property(secretArb, secretArb, idArb, bodyArb, (secret, other, id, body) => {
        const seconds = Math.floor(Date.now() / 1000)
        const [, signature] = signRaw(secret, id, seconds, Buffer.from(body, "utf8"))
        const headers = {
          "webhook-id": id,
          "webhook-timestamp": String(seconds),
          "webhook-signature": `v1,${signature}`
        }
        const theirs = (s: string) => {
          try {
            new Webhook(s).verify(body, headers, { jsonParse: false })
            return true
          } catch {
            return false
          }
        }
        const ours = (s: string) =>
          verifyDelivery({
            headers: { id, timestamp: String(seconds), signature: `v1,${signature}` },
            body: Buffer.from(body, "utf8"),
            keys: [key(s)],
            nowSeconds: seconds
          })._tag === "Verified"
        const sameKey = Buffer.from(key(secret)).equals(Buffer.from(key(other)))
        return theirs(secret) && ours(secret) && theirs(other) === sameKey && ours(other) === sameKey
      })
    )
  })

  it("agrees with it on the test vector", () => {
    assert.strictEqual(
      new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(Number(VECTOR.timestamp) * 1000), VECTOR.body),
      VECTOR.signature
    )
  })
})

/** A signature made by hand from the spec's steps (node:crypto), over raw bytes. */
const signRaw = (secret: string, id: string, seconds: number, body: Uint8Array): [string, string] => {
  const digest = createHmac("sha256", key(secret))
    .update(Buffer.concat([Buffer.from(`${id}.${seconds}.`), body]))
    .digest("base64")
  return ["v1", digest]
}
