import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { call, emulator } from "./helpers.ts"
import { ChangePage, decode, FileRecord, Single } from "./schemas.ts"

const NewUser = Schema.Struct({
  user_id: Schema.String,
  api_key: Schema.String,
  access_token: Schema.String,
  refresh_token: Schema.String
})
const Requests = Single(
  Schema.Array(
    Schema.Struct({
      seq: Schema.Number,
      origin: Schema.Literals(["api", "cdn"]),
      method: Schema.String,
      path: Schema.String,
      headers: Schema.Record(Schema.String, Schema.String),
      status: Schema.NullOr(Schema.Number)
    })
  )
)
const Item = Single(FileRecord)

describe("control API over HTTP", () => {
  it("exists only with the control option", async () => {
    const off = await emulator()
    assert.isUndefined(off.controlUrl)
    assert.strictEqual((await call(off, "GET", "/_control")).status, 404)
    const on = await emulator({ control: true })
    assert.strictEqual(on.controlUrl, `${on.authUrl}/_control`)
    assert.strictEqual((await call(on, "GET", "/_control", { token: null })).status, 200)
  })

  it("adds, edits, renames, moves, locks, unlocks and deletes items, each visible in the change feed", async () => {
    const e = await emulator({ control: true })
    const feedCursor = decode(ChangePage, (await call(e, "GET", "/files/changes")).json).meta.next_cursor
    const folder = decode(
      Item,
      (await call(e, "POST", "/_control/files", { body: { type: "folder", name: "F" } })).json
    ).data
    const file = decode(
      Item,
      (
        await call(e, "POST", "/_control/files", {
          body: { name: "v.mkv", size_bytes: 1000, media: { title: "V" }, poster: true, parent_id: folder.id }
        })
      ).json
    ).data
    assert.strictEqual(file.kind, "video")
    assert.strictEqual(file.mime_type, "video/x-matroska")
    assert.isNotNull(file.poster)
    const edited = decode(
      Item,
      (await call(e, "POST", `/_control/files/${file.id}/edit`, { body: { size_bytes: 2000 } })).json
    ).data
    assert.strictEqual(edited.size_bytes, 2000)
    const renamed = decode(
      Item,
      (await call(e, "POST", `/_control/files/${file.id}/rename`, { body: { name: "w.mkv" } })).json
    ).data
    assert.strictEqual(renamed.name, "w.mkv")
    const moved = decode(
      Item,
      (await call(e, "POST", `/_control/files/${file.id}/move`, { body: { parent_id: null } })).json
    ).data
    assert.strictEqual(moved.parent_id, null)
    assert.isTrue(decode(Item, (await call(e, "POST", `/_control/files/${file.id}/lock`)).json).data.locked)
    assert.isFalse(decode(Item, (await call(e, "POST", `/_control/files/${file.id}/unlock`)).json).data.locked)
    const removed = await call(e, "POST", "/_control/files/delete", { body: { ids: [folder.id] } })
    assert.strictEqual(removed.status, 200)
    const changes = decode(
      ChangePage,
      (await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(feedCursor)}`)).json
    ).data
    assert.sameMembers([...new Set(changes.map((c) => c.id))], [folder.id, file.id])
    assert.deepStrictEqual(changes.at(-1), { id: folder.id, parent_id: null, deleted: true })
  })

  it("reports errors in the envelope: 404 for unknown ids, 422 for invalid arguments and cycles", async () => {
    const e = await emulator({ control: true })
    assert.strictEqual((await call(e, "POST", "/_control/files/nope/rename", { body: { name: "x" } })).status, 404)
    assert.strictEqual((await call(e, "POST", "/_control/files", { body: { name: "" } })).status, 422)
    assert.strictEqual(
      (await call(e, "POST", "/_control/files", { body: { name: "a", size_bytes: "big" } })).status,
      422
    )
    const outer = e.control.addFolder({ name: "outer" })
    const inner = e.control.addFolder({ name: "inner", parentId: outer.id })
    const cycle = await call(e, "POST", `/_control/files/${outer.id}/move`, { body: { parent_id: inner.id } })
    assert.strictEqual(cycle.status, 422)
  })

  it("adds users whose credentials work and whose items stay private", async () => {
    const e = await emulator({ control: true })
    const user = decode(Single(NewUser), (await call(e, "POST", "/_control/users", { body: {} })).json).data
    const theirs = await call(e, "POST", "/_control/files", { body: { name: "t.txt", user_id: user.user_id } })
    const id = decode(Item, theirs.json).data.id
    assert.strictEqual((await call(e, "GET", `/files/${id}`, { token: user.api_key })).status, 200)
    assert.strictEqual((await call(e, "GET", `/files/${id}`, { token: user.access_token })).status, 200)
    assert.strictEqual((await call(e, "GET", `/files/${id}`)).status, 404)
  })

  it("reads and clears the request log, by origin", async () => {
    const e = await emulator({ control: true })
    await call(e, "GET", "/account", { headers: { "X-Request-ID": "logged-1" } })
    const log = decode(Requests, (await call(e, "GET", "/_control/requests?origin=api")).json).data
    const entry = log.find((r) => r.path === "/api/v1/account")
    assert.strictEqual(entry?.method, "GET")
    assert.strictEqual(entry?.status, 200)
    assert.strictEqual(entry?.headers["x-request-id"], "logged-1")
    assert.match(entry?.headers.authorization ?? "", /^Bearer /)
    assert.deepStrictEqual(decode(Requests, (await call(e, "GET", "/_control/requests?origin=cdn")).json).data, [])
    assert.strictEqual((await call(e, "DELETE", "/_control/requests")).status, 204)
    const after = decode(Requests, (await call(e, "GET", "/_control/requests")).json).data
    assert.deepStrictEqual(
      after.map((r) => r.path),
      ["/_control/requests"]
    )
  })

  it("expires cursors, advances the clock, edits the account and the torrent cache", async () => {
    const e = await emulator({ control: true })
    const cursor = decode(ChangePage, (await call(e, "GET", "/files/changes")).json).meta.next_cursor
    assert.strictEqual((await call(e, "POST", "/_control/cursors/expire")).status, 204)
    assert.strictEqual((await call(e, "GET", `/files/changes?cursor=${encodeURIComponent(cursor)}`)).status, 410)
    const before = e.state.clock.nowMs()
    assert.strictEqual((await call(e, "POST", "/_control/clock/advance", { body: { ms: 3_600_000 } })).status, 200)
    assert.isAtLeast(e.state.clock.nowMs() - before, 3_600_000)
    const account = await call(e, "POST", "/_control/account", {
      body: { credits_remaining: 5, limits: { concurrent_downloads: 1, daily_downloads: null } }
    })
    assert.strictEqual(account.status, 200)
    assert.strictEqual(e.state.primaryUser.account.creditsRemaining, 5)
    assert.strictEqual(e.state.primaryUser.account.limits.concurrent_downloads, 1)
    assert.strictEqual((await call(e, "POST", "/_control/account", { body: { limits: { bogus: 1 } } })).status, 422)
    const hash = "c".repeat(40)
    assert.strictEqual(
      (await call(e, "POST", "/_control/cache", { body: { hashes: [hash], cached: true } })).status,
      204
    )
    assert.isTrue(e.state.cachedHashes.has(hash))
  })

  it("lists and removes faults", async () => {
    const e = await emulator({ control: true })
    await call(e, "POST", "/_control/faults", { body: { kind: "status_500", path: "/api/v1/account", probability: 1 } })
    const list = await call(e, "GET", "/_control/faults")
    const id = decode(Single(Schema.Array(Schema.Struct({ id: Schema.String }))), list.json).data[0]?.id ?? ""
    assert.strictEqual((await call(e, "GET", "/account")).status, 500)
    assert.strictEqual((await call(e, "GET", "/account")).status, 500, "probability 1 fires until removed")
    assert.strictEqual((await call(e, "DELETE", `/_control/faults/${id}`)).status, 204)
    assert.strictEqual((await call(e, "DELETE", `/_control/faults/${id}`)).status, 404)
    assert.strictEqual((await call(e, "GET", "/account")).status, 200)
  })
})
