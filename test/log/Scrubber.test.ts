import { assert, describe, it } from "@effect/vitest"
import { Redacted } from "effect"
import { isSecretKey, makeScrubber, REDACTED } from "../../src/log/Scrubber.ts"

const scrubber = makeScrubber({ keyPrefixes: ["sk_live_"], secrets: [Redacted.make("noPrefixKey-7f3a9c2e")] })

const BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl"
const API_KEY = "dls_live_4f9a8b7c6d5e"
const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const REFRESH = "rt_8c1d2e3f4a5b6c7d"

describe("Scrubber.text", () => {
  it("removes bearer and basic credentials", () => {
    const out = scrubber.text(`Authorization: Bearer ${BEARER} and basic Basic dXNlcjpwYXNz`)
    assert.notInclude(out, BEARER)
    assert.notInclude(out, "dXNlcjpwYXNz")
    assert.include(out, `Bearer ${REDACTED}`)
  })

  it("removes API keys by prefix, keeping the prefix, and webhook secrets", () => {
    const out = scrubber.text(`key ${API_KEY} other sk_live_abcdef123456 secret ${WHSEC}.`)
    assert.notInclude(out, "4f9a8b7c6d5e")
    assert.notInclude(out, "abcdef123456")
    assert.notInclude(out, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    assert.include(out, `dls_${REDACTED}`)
    assert.include(out, `whsec_${REDACTED}`)
    // A word that merely contains the prefix is not a key.
    assert.include(scrubber.text("needls_are sharp"), "needls_are")
  })

  it("removes registered literal secrets whatever their shape", () => {
    assert.strictEqual(scrubber.text("using noPrefixKey-7f3a9c2e now"), `using ${REDACTED} now`)
  })

  it("removes values of secret fields in JSON, form and header text, also when escaped", () => {
    const inputs = [
      `{"access_token":"${BEARER}","refresh_token":"${REFRESH}","token_type":"Bearer"}`,
      `grant_type=refresh_token&refresh_token=${REFRESH}&client_id=abc`,
      `client_secret: ${REFRESH}`,
      JSON.stringify(JSON.stringify({ refresh_token: REFRESH })),
      `password=${REFRESH}`,
      `Cookie: session=${REFRESH}`
    ]
    for (const input of inputs) {
      const out = scrubber.text(input)
      assert.notInclude(out, REFRESH, input)
      assert.notInclude(out, BEARER, input)
    }
    const form = scrubber.text(`grant_type=refresh_token&refresh_token=${REFRESH}&client_id=abc`)
    assert.include(form, "grant_type=refresh_token")
    assert.include(form, "client_id=abc")
  })

  it("removes the query string and fragment of signed URLs and credentials in URLs", () => {
    const signed = "https://cdn.example.test/d/123/movie.mkv?expires=1700000000&signature=abcdef0123456789#frag"
    const out = scrubber.text(`GET ${signed} failed`)
    assert.strictEqual(out, `GET https://cdn.example.test/d/123/movie.mkv?${REDACTED}#${REDACTED} failed`)
    assert.strictEqual(scrubber.text("https://user:hunter22@example.test/x"), `https://${REDACTED}@example.test/x`)
    // Unknown parameter names hide the query: a CDN's signature may be called anything.
    assert.notInclude(scrubber.text("http://127.0.0.1:9/f?X-Amz-Signature=zz9&cursor=a"), "zz9")
    assert.notInclude(scrubber.text("http://127.0.0.1:9/f?st=zz9"), "zz9")
  })

  it("keeps the query of API URLs whose parameters are all harmless", () => {
    const url = "https://api.example.test/api/v1/files/changes?cursor=c_12&limit=500&include_media=true"
    assert.strictEqual(scrubber.text(url), url)
  })

  it("leaves ordinary text alone", () => {
    const text = 'downloaded "Season 1/Episode 2.mkv" (1.2 GiB) in 3.1s, token bucket refilled'
    assert.strictEqual(scrubber.text(text), text)
  })
})

describe("Scrubber.value", () => {
  it("redacts Redacted values and secret keys at any depth, in any key spelling", () => {
    const out = JSON.stringify(
      scrubber.value({
        apiKey: Redacted.make(API_KEY),
        nested: [{ accessToken: BEARER, "refresh-token": REFRESH, headers: { authorization: `Bearer ${BEARER}` } }],
        map: new Map([["client_secret", REFRESH]]),
        url: new URL(`https://cdn.test/f?sig=${REFRESH}`),
        error: new Error(`refresh failed for refresh_token=${REFRESH}`),
        ok: { fileId: "f_1", size: 10n, when: new Date(0) }
      })
    )
    for (const secret of [API_KEY, BEARER, REFRESH]) assert.notInclude(out, secret)
    assert.include(out, '"fileId":"f_1"')
    assert.include(out, '"size":"10"')
    assert.include(out, "1970-01-01T00:00:00.000Z")
  })

  it("survives cycles, deep nesting, throwing getters and __proto__ keys", () => {
    const cyclic: Record<string, unknown> = { name: "a" }
    cyclic.self = cyclic
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 50; i++) deep = { next: deep }
    const hostile = {
      toJSON() {
        throw new Error("no")
      }
    }
    const proto = JSON.parse('{"__proto__": {"token": "x-should-not-show"}}')
    const out = JSON.stringify(scrubber.value({ cyclic, deep, hostile, proto }))
    assert.include(out, "[Circular]")
    assert.include(out, "[…]")
    assert.include(out, "[unreadable]")
    assert.notInclude(out, "x-should-not-show")
  })

  it("names secret keys", () => {
    for (const key of [
      "access_token",
      "accessToken",
      "Refresh-Token",
      "API_KEY",
      "apiKey",
      "Authorization",
      "password"
    ]) {
      assert.isTrue(isSecretKey(key), key)
    }
    for (const key of ["fileId", "path", "token_type", "tokens_left", "expires_in"])
      assert.isFalse(isSecretKey(key), key)
  })
})

describe("outbound URLs registered", () => {
  const outbound = makeScrubber({
    urls: [
      "http://nas:8096/jellyfin?api_key=abcdefgh1234",
      "https://discord.com/api/webhooks/123456789012/tok-en_abcdefgh"
    ],
    secrets: [Redacted.make("https://ntfy.sh/myalertstopic")]
  })

  it("hides the parts a receiver may echo: query values, token-like segments, a secret URL's whole path", () => {
    const out = outbound.text(
      "echo: /jellyfin?api_key=abcdefgh1234 /api/webhooks/123456789012/tok-en_abcdefgh myalertstopic"
    )
    for (const part of ["abcdefgh1234", "123456789012", "tok-en_abcdefgh", "myalertstopic"])
      assert.notInclude(out, part)
  })

  it("keeps the route words of a URL that is not a secret itself", () => {
    assert.strictEqual(outbound.text("jellyfin: refresh sent to webhooks"), "jellyfin: refresh sent to webhooks")
  })
})
