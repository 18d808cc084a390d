/**
 * Who may call what, and the account-level reads: GET /account, GET /services (ETag,
 * private max-age=60, 304 reuse through the client's cache), and OAuth scopes where the
 * spec names them: user:read (account), downloads:read (services), files:read (file reads,
 * change feed), storage:read / storage:write (app storage; with files:read, file state and
 * include_state). A missing scope is Forbidden (403).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Emulator, expectReason, fid, freshUser, issueToken, logMark, requestsSince, withClient } from "./harness.ts"

layer(Emulator.layer())("account and services", (it) => {
  it.effect("GET /account decodes the account, its plan, credits and limits (API key and OAuth alike)", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.updateAccount(
        {
          creditsRemaining: 42,
          limits: {
            daily_downloads: { limit: 10, remaining: 7, resets_at: "2026-11-23T00:00:00.000000Z" },
            daily_download_bytes: null,
            max_file_size_bytes: 1_000_000,
            concurrent_downloads: 4,
            concurrent_torrents: null
          }
        },
        user.userId
      )
      const viaKey = yield* withClient(user.apiKey, (c) => c.account.get)
      const viaToken = yield* withClient(user.accessToken, (c) => c.account.get)
      assert.strictEqual(viaKey.id, user.userId)
      assert.strictEqual(viaKey.credits.remaining, 42)
      assert.deepStrictEqual(viaKey.limits.daily_downloads, {
        limit: 10,
        remaining: 7,
        resets_at: "2026-11-23T00:00:00.000000Z"
      })
      assert.strictEqual(viaKey.limits.concurrent_torrents, null)
      assert.strictEqual(viaKey.limits.max_file_size_bytes, 1_000_000)
      assert.strictEqual(viaKey.plan?.name, "Pro")
      assert.match(viaKey.created_at, /\.\d{6}Z$/)
      assert.deepStrictEqual(viaToken, viaKey)
    })
  )

  it.effect("an unknown bearer is Unauthorized with the WWW-Authenticate challenge", () =>
    Effect.gen(function* () {
      const mark = yield* logMark
      const reason = yield* expectReason(
        withClient("dls_not-a-key", (c) => c.account.get),
        "Unauthorized",
        401
      )
      assert.match(reason.challenge ?? "", /^Bearer /)
      assert.isDefined(reason.requestId)
      // An API key cannot be refreshed: one request, no retry.
      assert.strictEqual((yield* requestsSince(mark)).length, 1)
    })
  )

  it.effect("GET /services: within max-age no request; after it If-None-Match gets a 304 and the cached body", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const mark = yield* logMark
          const first = yield* c.services.list()
          assert.isAbove(first.data.length, 0)
          assert.isUndefined(first.data[0]?.url_patterns)
          const [sent] = yield* requestsSince(mark)
          assert.strictEqual(sent?.status, 200)
          assert.isUndefined(sent?.headers["if-none-match"])

          // Fresh for 60 s: served from the cache, nothing sent.
          yield* TestClock.adjust("59 seconds")
          const cached = yield* c.services.list()
          assert.deepStrictEqual(cached, first)
          assert.strictEqual((yield* requestsSince(mark)).length, 1)

          // Stale: revalidated with the ETag; the 304 (no body) reuses the cached body.
          yield* TestClock.adjust("2 seconds")
          const revalidated = yield* c.services.list()
          assert.deepStrictEqual(revalidated, first)
          const log = yield* requestsSince(mark)
          assert.strictEqual(log.length, 2)
          assert.strictEqual(log[1]?.status, 304)
          assert.match(log[1]?.headers["if-none-match"] ?? "", /^"/)
        })
      )
    })
  )

  it.effect("GET /services?include=url_patterns: patterns compile, pattern_version is set, its ETag is separate", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const mark = yield* logMark
          const plain = yield* c.services.list()
          const withPatterns = yield* c.services.list({ urlPatterns: true })
          assert.isDefined(withPatterns.meta?.pattern_version)
          for (const service of withPatterns.data) {
            assert.isArray(service.url_patterns)
            for (const p of service.url_patterns ?? []) assert.instanceOf(new RegExp(p.source, p.flags), RegExp)
          }
          assert.isTrue(withPatterns.data.some((s) => (s.url_patterns ?? []).length > 0))
          assert.notDeepEqual(plain, withPatterns)
          const log = yield* requestsSince(mark)
          // Two variants, two full answers: the cached plain list's ETag was not sent for the other variant.
          assert.deepStrictEqual(
            log.map((r) => [r.status, r.headers["if-none-match"]]),
            [
              [200, undefined],
              [200, undefined]
            ]
          )
        })
      )
    })
  )
})

/** An access token of `userId` for the emulator's client with exactly `scopes`. */
const tokenWith = (userId: string, scopes: ReadonlyArray<string>) =>
  Emulator.use((e) => issueToken(userId, e.clientId, scopes))

layer(Emulator.layer())("scopes", (it) => {
  it.effect("files:read alone: file reads and the change feed, but not the account, services, state or storage", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "a.mkv" })
      const token = yield* tokenWith(user.userId, ["files:read"])
      yield* withClient(token, (c) =>
        Effect.gen(function* () {
          assert.strictEqual((yield* c.files.list()).items[0]?.id, file.id)
          assert.strictEqual((yield* c.files.get(fid(file.id))).id, file.id)
          assert.strictEqual((yield* c.changes.page({})).items[0]?.id, file.id)
          yield* expectReason(c.account.get, "Forbidden", 403)
          yield* expectReason(c.services.list(), "Forbidden", 403)
          yield* expectReason(c.files.list({ includeState: true }), "Forbidden", 403)
          yield* expectReason(c.state.get(fid(file.id)), "Forbidden", 403)
          yield* expectReason(c.storage.list(), "Forbidden", 403)
        })
      )
    })
  )

  it.effect("user:read and downloads:read: account and services only", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      const token = yield* tokenWith(user.userId, ["user:read", "downloads:read"])
      yield* withClient(token, (c) =>
        Effect.gen(function* () {
          assert.strictEqual((yield* c.account.get).id, user.userId)
          assert.isAbove((yield* c.services.list()).data.length, 0)
          yield* expectReason(c.files.list(), "Forbidden", 403)
          yield* expectReason(c.changes.page({}), "Forbidden", 403)
        })
      )
    })
  )

  it.effect("state reads need files:read + storage:read, writes files:read + storage:write", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "b.mkv" })
      const reader = yield* tokenWith(user.userId, ["files:read", "storage:read"])
      const writerWithoutFiles = yield* tokenWith(user.userId, ["storage:write"])
      yield* withClient(reader, (c) =>
        Effect.gen(function* () {
          assert.isNull(yield* c.state.get(fid(file.id)))
          assert.strictEqual((yield* c.files.list({ includeState: true })).items[0]?.app_state, null)
          assert.deepStrictEqual((yield* c.storage.list()).data, [])
          yield* expectReason(c.state.put(fid(file.id), { a: 1 }), "Forbidden", 403)
          yield* expectReason(c.state.delete(fid(file.id)), "Forbidden", 403)
          yield* expectReason(c.storage.put("k", 1), "Forbidden", 403)
        })
      )
      yield* withClient(writerWithoutFiles, (c) =>
        Effect.gen(function* () {
          yield* expectReason(c.state.put(fid(file.id), { a: 1 }), "Forbidden", 403)
          yield* c.storage.put("k", 1)
          yield* expectReason(c.storage.get("k"), "Forbidden", 403)
        })
      )
    })
  )
})
