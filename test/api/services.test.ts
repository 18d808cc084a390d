import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { freshnessSeconds } from "../../src/api/services.ts"
import { type Recorded, startServer, withClient } from "./testServer.ts"

const plain = { data: [{ code: "ftp", name: "FTP" }] }
const patterns = {
  data: [{ code: "vid", url_patterns: [{ source: "^https://v\\.example/", flags: "i" }] }],
  meta: { pattern_version: "7" }
}

/** A /services endpoint with one ETag per variant, honouring If-None-Match. */
const servicesServer = (cacheControl = "private, max-age=60") =>
  startServer((r: Recorded) => {
    const withPatterns = r.query.get("include") === "url_patterns"
    const etag = withPatterns ? '"p1"' : '"n1"'
    if (r.headers["if-none-match"] === etag) return { status: 304, headers: { etag, "cache-control": cacheControl } }
    return { headers: { etag, "cache-control": cacheControl }, body: withPatterns ? patterns : plain }
  })

describe("GET /services cache", () => {
  it.effect(
    "serves within max-age without a request, then revalidates with If-None-Match and reuses the body on 304",
    () =>
      Effect.gen(function* () {
        const server = yield* servicesServer()
        const seen = yield* withClient(server, (c) =>
          Effect.gen(function* () {
            const first = yield* c.services.list()
            const cached = yield* c.services.list()
            yield* TestClock.adjust("61 seconds")
            const revalidated = yield* c.services.list()
            return [first, cached, revalidated]
          })
        )
        assert.deepStrictEqual(
          seen.map((s) => s.data[0]?.code),
          ["ftp", "ftp", "ftp"]
        )
        assert.strictEqual(server.requests.length, 2)
        assert.isUndefined(server.requests[0]?.headers["if-none-match"])
        assert.strictEqual(server.requests[1]?.headers["if-none-match"], '"n1"')
      })
  )

  it.effect("keeps the lists with and without url_patterns apart, each with its own ETag", () =>
    Effect.gen(function* () {
      const server = yield* servicesServer()
      const [plainList, patternList] = yield* withClient(server, (c) =>
        Effect.gen(function* () {
          const a = yield* c.services.list()
          const b = yield* c.services.list({ urlPatterns: true })
          yield* TestClock.adjust("2 minutes")
          yield* c.services.list({ urlPatterns: true })
          yield* c.services.list()
          return [a, b]
        })
      )
      assert.isUndefined(plainList?.data[0]?.url_patterns)
      assert.strictEqual(patternList?.data[0]?.url_patterns?.[0]?.source, "^https://v\\.example/")
      assert.strictEqual(patternList?.meta?.pattern_version, "7")
      assert.deepStrictEqual(
        server.requests.map((r) => [r.query.get("include"), r.headers["if-none-match"] ?? null]),
        [
          [null, null],
          ["url_patterns", null],
          ["url_patterns", '"p1"'],
          [null, '"n1"']
        ]
      )
    })
  )

  it.effect("does not keep a no-store answer", () =>
    Effect.gen(function* () {
      const server = yield* servicesServer("no-store")
      yield* withClient(server, (c) => Effect.andThen(c.services.list(), c.services.list()))
      assert.strictEqual(server.requests.length, 2)
      assert.isUndefined(server.requests[1]?.headers["if-none-match"])
    })
  )

  it("reads freshness from Cache-Control", () => {
    assert.strictEqual(freshnessSeconds("private, max-age=60"), 60)
    assert.strictEqual(freshnessSeconds("MAX-AGE=5"), 5)
    assert.strictEqual(freshnessSeconds(undefined), 0)
    assert.strictEqual(freshnessSeconds("no-cache, max-age=60"), 0)
    assert.strictEqual(freshnessSeconds("max-age=-1"), 0)
    assert.isUndefined(freshnessSeconds("private, no-store"))
  })
})
