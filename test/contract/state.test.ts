/**
 * Per-file state (GET/PUT/DELETE /files/{file}/state) and application storage
 * (GET /app-storage, GET/PUT/DELETE /app-storage/{key}) through the client: conditions
 * (If-Match, If-None-Match: *, If-Match: *), 412, 404, OAuth only, and the value rules.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { WEB_CLIENT_ID } from "../../src/emulator/oauthClients.ts"
import { Emulator, expectReason, fid, freshUser, issueToken, prop, rawCall, withClient } from "./harness.ts"

layer(Emulator.layer())("file state", (it) => {
  it.effect("GET without state: data null; PUT If-None-Match: * creates; a second create-only PUT is 412", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "a.mkv" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          assert.isNull(yield* c.state.get(fid(file.id)))
          const raw = yield* rawCall("GET", `${e.baseUrl}/files/${file.id}/state`, { bearer: user.accessToken })
          assert.deepStrictEqual([raw.status, raw.json, raw.headers.get("etag")], [200, { data: null }, null])
          const created = yield* c.state.put(fid(file.id), { watched: false, position_ms: 0 }, { ifNoneMatch: "*" })
          assert.deepStrictEqual(created.value, { watched: false, position_ms: 0 })
          assert.strictEqual(created.version, 1)
          assert.match(created.etag, /^"[^"]+"$/)
          assert.notStrictEqual(created.etag, `"${created.version}"`)
          const read = yield* c.state.get(fid(file.id))
          assert.deepStrictEqual(read, created)
          yield* expectReason(c.state.put(fid(file.id), { other: 1 }, { ifNoneMatch: "*" }), "Precondition", 412)
          assert.deepStrictEqual((yield* c.state.get(fid(file.id)))?.value, { watched: false, position_ms: 0 })
        })
      )
    })
  )

  it.effect(
    "If-Match with the current ETag replaces the whole object; a stale ETag is 412; no condition: last write wins",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        const file = e.control.addFile({ userId: user.userId, name: "b.mkv" })
        yield* withClient(user.accessToken, (c) =>
          Effect.gen(function* () {
            const before = yield* c.files.get(fid(file.id))
            const v1 = yield* c.state.put(fid(file.id), { a: 1, b: 2 })
            const v2 = yield* c.state.put(fid(file.id), { c: 3 }, { ifMatch: v1.etag })
            assert.deepStrictEqual(v2.value, { c: 3 })
            assert.strictEqual(v2.version, 2)
            assert.notStrictEqual(v2.etag, v1.etag)
            yield* expectReason(c.state.put(fid(file.id), { d: 4 }, { ifMatch: v1.etag }), "Precondition", 412)
            const v3 = yield* c.state.put(fid(file.id), {})
            assert.deepStrictEqual(v3.value, {})
            assert.strictEqual(v3.version, 3)
            // State writes do not touch the file's timestamps.
            assert.deepStrictEqual(yield* c.files.get(fid(file.id)), before)
          })
        )
      })
  )

  it.effect("DELETE clears the app's state (204 even when none); a stale If-Match is 412", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "c.mkv" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          yield* c.state.delete(fid(file.id))
          const v1 = yield* c.state.put(fid(file.id), { n: 1 })
          const v2 = yield* c.state.put(fid(file.id), { n: 2 })
          yield* expectReason(c.state.delete(fid(file.id), { ifMatch: v1.etag }), "Precondition", 412)
          yield* c.state.delete(fid(file.id), { ifMatch: v2.etag })
          assert.isNull(yield* c.state.get(fid(file.id)))
          yield* c.state.delete(fid(file.id))
        })
      )
    })
  )

  it.effect("404 for a missing, deleted or another user's resource; state goes with its file, survives a rename", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const other = yield* freshUser
      const folder = e.control.addFolder({ userId: user.userId, name: "F" })
      const child = e.control.addFile({ userId: user.userId, parentId: folder.id, name: "child.mkv" })
      const theirs = e.control.addFile({ userId: other.userId, name: "theirs.mkv" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          yield* expectReason(c.state.get(fid("i_missing")), "NotFound", 404)
          yield* expectReason(c.state.get(fid(theirs.id)), "NotFound", 404)
          yield* expectReason(c.state.put(fid(theirs.id), { x: 1 }), "NotFound", 404)
          const folderState = yield* c.state.put(fid(folder.id), { pinned: true })
          yield* c.state.put(fid(child.id), { seen: true })
          e.control.rename(child.id, "renamed.mkv", user.userId)
          e.control.move(child.id, folder.id, user.userId)
          assert.deepStrictEqual((yield* c.state.get(fid(child.id)))?.value, { seen: true })
          assert.deepStrictEqual(yield* c.state.get(fid(folder.id)), folderState)
          // include_state shows the calling app's state on records.
          const listed = yield* c.files.list({ parentId: fid(folder.id), includeState: true })
          assert.deepStrictEqual(listed.items[0]?.app_state?.value, { seen: true })
          // Deleting the folder removes its descendants' state: the resource is gone.
          yield* c.files.deleteMany([fid(folder.id)])
          yield* expectReason(c.state.get(fid(child.id)), "NotFound", 404)
          yield* expectReason(c.state.delete(fid(folder.id)), "NotFound", 404)
        })
      )
    })
  )

  it.effect(
    "state is private per app: another OAuth app of the same user sees none, and its DELETE clears only its own",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        const file = e.control.addFile({ userId: user.userId, name: "shared.mkv" })
        const otherApp = yield* issueToken(user.userId, WEB_CLIENT_ID, ["files:read", "storage:read", "storage:write"])
        const mine = yield* withClient(user.accessToken, (c) => c.state.put(fid(file.id), { app: "mine" }))
        yield* withClient(otherApp, (c) =>
          Effect.gen(function* () {
            assert.isNull(yield* c.state.get(fid(file.id)))
            assert.isNull((yield* c.files.get(fid(file.id), { includeState: true })).app_state)
            yield* c.state.put(fid(file.id), { app: "theirs" })
            yield* c.state.delete(fid(file.id))
            assert.isNull(yield* c.state.get(fid(file.id)))
          })
        )
        yield* withClient(user.accessToken, (c) =>
          Effect.gen(function* () {
            assert.deepStrictEqual(yield* c.state.get(fid(file.id)), mine)
            assert.deepStrictEqual((yield* c.files.get(fid(file.id), { includeState: true })).app_state, mine)
          })
        )
      })
  )

  it.effect("token rotation keeps the app's state: the refreshed token of the same app reads it", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "r.mkv" })
      const written = yield* withClient(user.accessToken, (c) => c.state.put(fid(file.id), { kept: true }))
      const rotated = yield* withClient("unused", (c) =>
        c.oauth.token({ grantType: "refresh_token", refreshToken: Redacted.make(user.refreshToken) })
      )
      assert.deepStrictEqual(yield* withClient(rotated.access_token, (c) => c.state.get(fid(file.id))), written)
    })
  )

  it.effect("expiry cleanup removes the file and its state: 404 afterwards, and a tombstone in the feed", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({
        userId: user.userId,
        name: "short-lived.mkv",
        expiresAt: (e.state.clock.nowMs() + 60_000) * 1000
      })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          yield* c.state.put(fid(file.id), { progress: 0.5 })
          const start = yield* c.changes.page({})
          assert.strictEqual((yield* c.files.get(fid(file.id))).id, file.id)
          e.control.advanceClock(61_000)
          yield* expectReason(c.state.get(fid(file.id)), "NotFound", 404)
          yield* expectReason(c.files.get(fid(file.id)), "NotFound", 404)
          const next = yield* c.changes.page({}, start.nextCursor ?? undefined)
          assert.deepStrictEqual([...next.items], [{ id: file.id, parent_id: null, deleted: true }])
        })
      )
    })
  )

  it.effect("file state is OAuth only: a personal API key is Forbidden on GET, PUT and DELETE", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "d.mkv" })
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          yield* expectReason(c.state.get(fid(file.id)), "Forbidden", 403)
          yield* expectReason(c.state.put(fid(file.id), { x: 1 }), "Forbidden", 403)
          yield* expectReason(c.state.delete(fid(file.id)), "Forbidden", 403)
        })
      )
    })
  )

  it.effect("values must be JSON objects within 64 KiB: the client refuses others before sending", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "e.mkv" })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          for (const value of [{ big: "x".repeat(70_000) }, { bad: Number.NaN }, { nul: "a\u0000b" }]) {
            const refused = yield* expectReason(c.state.put(fid(file.id), value), "ClientValidation")
            assert.match(refused.field, /^value/)
          }
          assert.isNull(yield* c.state.get(fid(file.id)))
        })
      )
    })
  )
})

layer(Emulator.layer())("app storage", (it) => {
  it.effect("PUT keeps every JSON value as sent ({}, [], null, false, 0, ''); GET returns it with its ETag", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const values = { obj: {}, arr: [], nil: null, no: false, zero: 0, empty: "", nested: { a: [1, "b", null] } }
          for (const [key, value] of Object.entries(values)) {
            const put = yield* c.storage.put(key, value)
            assert.deepStrictEqual(put.item.value, value)
            assert.match(put.etag ?? "", /^"[^"]+"$/)
            const got = yield* c.storage.get(key)
            assert.deepStrictEqual(got.item.value, value)
            assert.strictEqual(got.etag, put.etag)
          }
          const list = yield* c.storage.list()
          assert.deepStrictEqual(list.data.map((i) => i.key).sort(), Object.keys(values).sort())
          assert.strictEqual(prop(list.meta?.quota, "keys_used"), Object.keys(values).length)
          yield* expectReason(c.storage.get("absent"), "NotFound", 404)
        })
      )
    })
  )

  it.effect(
    "conditions: If-Match needs the exact strong ETag (weak fails), If-Match: * needs existence, If-None-Match: * absence",
    () =>
      Effect.gen(function* () {
        const user = yield* freshUser
        yield* withClient(user.accessToken, (c) =>
          Effect.gen(function* () {
            yield* expectReason(c.storage.put("k", 1, { ifMatch: "*" }), "Precondition", 412)
            const created = yield* c.storage.put("k", 1, { ifNoneMatch: "*" })
            assert.strictEqual(created.item.version, 1)
            yield* expectReason(c.storage.put("k", 2, { ifNoneMatch: "*" }), "Precondition", 412)
            const etag = created.etag ?? ""
            yield* expectReason(c.storage.put("k", 2, { ifMatch: `W/${etag}` }), "Precondition", 412)
            const replaced = yield* c.storage.put("k", 2, { ifMatch: etag })
            assert.strictEqual(replaced.item.version, 2)
            assert.notStrictEqual(replaced.etag, etag)
            yield* expectReason(c.storage.put("k", 3, { ifMatch: etag }), "Precondition", 412)
            const any = yield* c.storage.put("k", 3, { ifMatch: "*" })
            assert.strictEqual(any.item.value, 3)
            // DELETE with a stale If-Match is 412; with the current one 204.
            yield* expectReason(c.storage.delete("k", { ifMatch: etag }), "Precondition", 412)
            yield* c.storage.delete("k", { ifMatch: any.etag ?? "" })
            yield* expectReason(c.storage.get("k"), "NotFound", 404)
            // Recreated: a new ETag, never one seen before.
            const again = yield* c.storage.put("k", 3)
            assert.notInclude([created.etag, replaced.etag, any.etag], again.etag)
          })
        )
      })
  )

  it.effect("storage belongs to one user within one OAuth app", () =>
    Effect.gen(function* () {
      const one = yield* freshUser
      const two = yield* freshUser
      yield* withClient(one.accessToken, (c) => c.storage.put("shared-name", "mine"))
      yield* expectReason(
        withClient(two.accessToken, (c) => c.storage.get("shared-name")),
        "NotFound",
        404
      )
      const list = yield* withClient(two.accessToken, (c) => c.storage.list())
      assert.deepStrictEqual(list.data, [])
      // The same user through another OAuth application has another namespace.
      const otherApp = yield* issueToken(one.userId, WEB_CLIENT_ID, ["storage:read", "storage:write"])
      yield* expectReason(
        withClient(otherApp, (c) => c.storage.get("shared-name")),
        "NotFound",
        404
      )
      yield* withClient(otherApp, (c) => c.storage.put("shared-name", "theirs"))
      assert.strictEqual((yield* withClient(one.accessToken, (c) => c.storage.get("shared-name"))).item.value, "mine")
    })
  )

  it.effect("app storage is OAuth only: a personal API key is Forbidden", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          yield* expectReason(c.storage.list(), "Forbidden", 403)
          yield* expectReason(c.storage.get("k"), "Forbidden", 403)
          yield* expectReason(c.storage.put("k", 1), "Forbidden", 403)
          yield* expectReason(c.storage.delete("k"), "Forbidden", 403)
        })
      )
    })
  )

  it.effect("the namespace holds 256 keys: the 257th is refused (413), replacing an existing key still works", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          for (let n = 0; n < 256; n++) yield* c.storage.put(`key-${n}`, n)
          const full = yield* expectReason(c.storage.put("one-too-many", true), "Validation", 413)
          assert.isDefined(full.code)
          assert.strictEqual((yield* c.storage.put("key-0", "replaced")).item.value, "replaced")
          assert.strictEqual(prop((yield* c.storage.list()).meta?.quota, "keys_used"), 256)
        })
      )
    })
  )

  it.effect("a value over 64 KiB is refused before sending", () =>
    Effect.gen(function* () {
      const user = yield* freshUser
      const refused = yield* expectReason(
        withClient(user.accessToken, (c) => c.storage.put("big", "x".repeat(66_000))),
        "ClientValidation"
      )
      assert.strictEqual(refused.field, "value")
    })
  )
})
