/**
 * The client's retry contract against injected faults: 429 with Retry-After is waited out,
 * 5xx and dropped connections are retried for GET with the same X-Request-ID, unsafe
 * POSTs are never resent, broken bodies are Protocol failures, and repeated change items
 * are accepted. Runs on the live clock: the client's own waits are what is measured.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Emulator, expectReason, fid, freshUser, logMark, requestsSince, withClient } from "./harness.ts"

layer(Emulator.layer(), { excludeTestServices: true })("retries and faults", (it) => {
  it.effect("429 with Retry-After: the client waits at least that long, then succeeds with the same request id", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "status_429", path: "/api/v1/account", method: "GET", count: 1, retryAfterSeconds: 1 })
      const mark = yield* logMark
      const account = yield* withClient(user.apiKey, (c) => c.account.get)
      assert.strictEqual(account.id, user.userId)
      const log = yield* requestsSince(mark)
      assert.deepStrictEqual(
        log.map((r) => r.status),
        [429, 200]
      )
      // Backoff alone would be ≤ 2 ms here; the wait is the 1 s asked for (less clock rounding).
      assert.isAtLeast((log[1]?.at ?? 0) - (log[0]?.at ?? 0), 990)
      assert.strictEqual(log[0]?.requestId, log[1]?.requestId)
    })
  )

  it.effect("429 asking for more than the client waits inline is handed to the caller with the delay", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "status_429", path: "/api/v1/files", count: 1, retryAfterSeconds: 3_600 })
      const mark = yield* logMark
      const limited = yield* expectReason(
        withClient(user.apiKey, (c) => c.files.list()),
        "RateLimited",
        429
      )
      assert.strictEqual(limited.retryAfterMillis, 3_600_000)
      assert.strictEqual((yield* requestsSince(mark)).length, 1)
    })
  )

  it.effect("500 and 503 are retried for GET until an answer, with one X-Request-ID across attempts", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "status_503", path: "/api/v1/account", count: 2 })
      e.control.addFault({ kind: "status_500", path: "/api/v1/account", count: 1 })
      const mark = yield* logMark
      yield* withClient(user.apiKey, (c) => c.account.get)
      const log = yield* requestsSince(mark)
      assert.deepStrictEqual(
        log.map((r) => r.status),
        [503, 503, 500, 200]
      )
      assert.strictEqual(new Set(log.map((r) => r.headers["x-request-id"])).size, 1)
    })
  )

  it.effect("retries stop after the schedule's attempts with a Server failure", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const fault = e.control.addFault({ kind: "status_500", path: "/api/v1/account", count: 50 })
      const mark = yield* logMark
      yield* expectReason(
        withClient(user.apiKey, (c) => c.account.get),
        "Server",
        500
      )
      assert.strictEqual((yield* requestsSince(mark)).length, 5)
      e.control.removeFault(fault.id)
    })
  )

  it.effect("a connection reset mid-body is retried for GET", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFile({ userId: user.userId, name: "a.txt" })
      e.control.addFault({ kind: "reset", path: "/api/v1/files", count: 1, afterBytes: 10 })
      const mark = yield* logMark
      const page = yield* withClient(user.apiKey, (c) => c.files.list())
      assert.strictEqual(page.items.length, 1)
      assert.strictEqual((yield* requestsSince(mark)).length, 2)
    })
  )

  it.effect("a truncated body (full Content-Length promised) is retried for GET", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "truncate", path: "/api/v1/account", count: 1, afterBytes: 20 })
      const mark = yield* logMark
      assert.strictEqual((yield* withClient(user.apiKey, (c) => c.account.get)).id, user.userId)
      assert.strictEqual((yield* requestsSince(mark)).length, 2)
    })
  )

  it.effect("bulk delete is safe to resend: a replay of an applied delete answers deleted (already scheduled)", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "gone.txt" })
      // The delete is applied, then the connection drops mid-answer; the client sends it again.
      e.control.addFault({ kind: "reset", path: "/api/v1/files/delete", count: 1, afterBytes: 5 })
      const mark = yield* logMark
      const results = yield* withClient(user.apiKey, (c) => c.files.deleteMany([fid(file.id)]))
      assert.deepStrictEqual(
        results.map((r) => [r.id, r.result]),
        [[file.id, "deleted"]]
      )
      assert.strictEqual((yield* requestsSince(mark)).length, 2)
      assert.isUndefined(e.control.item(file.id, user.userId))
    })
  )

  it.effect("unsafe POSTs are never resent after a 5xx: download creation and folder creation fail once", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "status_503", path: "/api/v1/downloads", method: "POST", count: 1 })
      e.control.addFault({ kind: "status_500", path: "/api/v1/files/folder", count: 1 })
      const mark = yield* logMark
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          yield* expectReason(c.downloads.create({ url: "https://x.example/a.bin" }), "Server", 503)
          yield* expectReason(c.files.createFolder({ name: "New" }), "Server", 500)
        })
      )
      assert.strictEqual((yield* requestsSince(mark)).length, 2)
    })
  )

  it.effect("a body that is not JSON is a Protocol failure naming the request id", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      e.control.addFault({ kind: "malformed_json", path: "/api/v1/account", count: 1 })
      const reason = yield* expectReason(
        withClient(user.apiKey, (c) => c.account.get),
        "Protocol"
      )
      assert.isDefined(reason.requestId)
      assert.strictEqual(reason.status, 200)
    })
  )

  it.effect("a change page that repeats items is accepted as it is (the same item may appear again)", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "a.txt" })
      e.control.addFault({ kind: "duplicate_items", path: "/api/v1/files/changes", count: 1 })
      const page = yield* withClient(user.accessToken, (c) => c.changes.page({}, undefined))
      assert.deepStrictEqual(
        page.items.map((i) => i.id),
        [file.id, file.id]
      )
    })
  )

  it.effect("the caller's X-Request-ID is sent and echoed; the page keeps it", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      const mark = yield* logMark
      const page = yield* withClient(user.accessToken, (c) => c.changes.page({ requestId: "contract-req-1" }))
      assert.strictEqual(page.requestId, "contract-req-1")
      assert.strictEqual((yield* requestsSince(mark))[0]?.headers["x-request-id"], "contract-req-1")
      const refused = yield* expectReason(
        withClient(user.accessToken, (c) => c.changes.page({ requestId: "x".repeat(101) })),
        "ClientValidation"
      )
      assert.strictEqual(refused.field, "X-Request-ID")
    })
  )
})
