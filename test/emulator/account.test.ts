import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { call, emulator } from "./helpers.ts"
import { decode, ErrorEnvelope, Single } from "./schemas.ts"

const Cap = Schema.NullOr(Schema.Struct({ limit: Schema.Number, remaining: Schema.Number, resets_at: Schema.String }))
const Account = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  email_verified: Schema.Boolean,
  created_at: Schema.String.check(Schema.isPattern(/\.\d{6}Z$/)),
  plan: Schema.NullOr(Schema.Struct({ name: Schema.String, expires_at: Schema.String })),
  credits: Schema.Struct({ remaining: Schema.Number }),
  limits: Schema.Struct({
    daily_downloads: Cap,
    daily_download_bytes: Cap,
    max_file_size_bytes: Schema.NullOr(Schema.Number),
    concurrent_downloads: Schema.NullOr(Schema.Number),
    concurrent_torrents: Schema.NullOr(Schema.Number)
  })
})
const Service = Schema.Struct({
  code: Schema.String,
  name: Schema.String,
  type: Schema.String,
  domains: Schema.Array(Schema.String),
  status: Schema.String
})
const Services = Schema.Struct({ data: Schema.Array(Service) })
const ServicesWithPatterns = Schema.Struct({
  data: Schema.Array(
    Schema.Struct({
      ...Service.fields,
      url_patterns: Schema.Array(Schema.Struct({ source: Schema.String, flags: Schema.String }))
    })
  ),
  meta: Schema.Struct({ pattern_version: Schema.String })
})
const CacheResults = Single(Schema.Array(Schema.Struct({ hash: Schema.String, cached: Schema.Boolean })))

describe("GET /account", () => {
  it("returns plan, credits and every limit (null when no cap applies), editable by the control API", async () => {
    const e = await emulator()
    const account = decode(Single(Account), (await call(e, "GET", "/account")).json).data
    assert.strictEqual(account.id, e.state.primaryUser.id)
    e.control.updateAccount({
      plan: null,
      creditsRemaining: 0,
      limits: {
        ...account.limits,
        daily_downloads: { limit: 10, remaining: 3, resets_at: "2030-01-01T00:00:00.000000Z" }
      }
    })
    const changed = decode(Single(Account), (await call(e, "GET", "/account", { token: e.apiKey })).json).data
    assert.strictEqual(changed.plan, null)
    assert.strictEqual(changed.credits.remaining, 0)
    assert.deepStrictEqual(changed.limits.daily_downloads, {
      limit: 10,
      remaining: 3,
      resets_at: "2030-01-01T00:00:00.000000Z"
    })
  })
})

describe("GET /services", () => {
  it("lists services; include=url_patterns adds patterns and meta.pattern_version", async () => {
    const e = await emulator()
    const plain = await call(e, "GET", "/services")
    const list = decode(Services, plain.json)
    assert.isAbove(list.data.length, 0)
    assert.notProperty(list.data[0], "url_patterns")
    const withPatterns = decode(ServicesWithPatterns, (await call(e, "GET", "/services?include=url_patterns")).json)
    for (const service of withPatterns.data) for (const p of service.url_patterns) new RegExp(p.source, p.flags)
    assert.isTrue(
      withPatterns.data.some((s) => s.url_patterns.length === 0),
      "services without patterns carry []"
    )
    const magnet = withPatterns.data.find((s) => s.code === "magnet")?.url_patterns[0]
    assert.match(`magnet:?xt=urn:btih:${"a".repeat(40)}`, new RegExp(magnet?.source ?? "^$", magnet?.flags))
    assert.strictEqual((await call(e, "GET", "/services?include=nonsense")).status, 422)
  })

  it("ETag per variant, Cache-Control private max-age=60, If-None-Match → 304 without body", async () => {
    const e = await emulator()
    const plain = await call(e, "GET", "/services")
    const patterns = await call(e, "GET", "/services?include=url_patterns")
    const etag = plain.headers.get("etag") ?? ""
    assert.match(etag, /^"[^"]+"$/)
    assert.notStrictEqual(patterns.headers.get("etag"), etag, "separate ETags with and without patterns")
    assert.strictEqual(plain.headers.get("cache-control"), "private, max-age=60")
    const cached = await call(e, "GET", "/services", { headers: { "If-None-Match": etag } })
    assert.strictEqual(cached.status, 304)
    assert.strictEqual(cached.text, "")
    assert.strictEqual(cached.headers.get("etag"), etag)
    assert.isNotNull(cached.headers.get("x-request-id"))
    const other = await call(e, "GET", "/services?include=url_patterns", { headers: { "If-None-Match": etag } })
    assert.strictEqual(other.status, 200, "the other variant's tag does not match")
    assert.strictEqual(
      (await call(e, "GET", "/services", { headers: { "If-None-Match": `"x", W/${etag}` } })).status,
      304
    )
  })
})

describe("POST /cache/check", () => {
  const a = "a".repeat(40)
  const b = "B".repeat(40)

  it("reports availability per hash, with no side effects", async () => {
    const e = await emulator()
    e.control.setCached([a], true)
    const before = e.state.primaryUser.tree.seq
    const credits = e.state.primaryUser.account.creditsRemaining
    const result = await call(e, "POST", "/cache/check", { body: { hashes: [a, b] }, token: e.apiKey })
    assert.strictEqual(result.status, 200)
    assert.deepStrictEqual(decode(CacheResults, result.json).data, [
      { hash: a, cached: true },
      { hash: b, cached: false }
    ])
    assert.strictEqual(e.state.primaryUser.tree.seq, before)
    assert.strictEqual(e.state.primaryUser.account.creditsRemaining, credits)
    assert.isFalse(e.state.cachedHashes.has(b.toLowerCase()), "a check reserves nothing")
  })

  it("rejects duplicates (case-insensitive), malformed hashes and empty lists", async () => {
    const e = await emulator()
    for (const hashes of [[a, a.toUpperCase()], ["xyz"], [], "nope"]) {
      const result = await call(e, "POST", "/cache/check", { body: { hashes } })
      assert.strictEqual(result.status, 422, JSON.stringify(hashes))
      assert.property(decode(ErrorEnvelope, result.json).error.details?.fields, "hashes")
    }
  })
})
