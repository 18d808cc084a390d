import { Schema } from "effect"
import { assert, describe, it } from "vitest"
import { sampleMedia } from "../../src/emulator/media.ts"
import { byUpdatedThenId } from "../../src/emulator/routes/files.ts"
import { call, emulator, listAll } from "./helpers.ts"
import { decode, ErrorEnvelope, FilePage, FileRecord, MediaFull, MediaSummary, Single } from "./schemas.ts"

/** A small tree: root {A/{a1.mkv, B/{b1.srt}}, r1.txt, r2.mkv (download d1)}. */
const sample = async () => {
  const e = await emulator()
  const c = e.control
  const A = c.addFolder({ name: "A" })
  const a1 = c.addFile({
    name: "a1.mkv",
    parentId: A.id,
    sizeBytes: 1000,
    media: sampleMedia({ title: "a1", seed: 1, sizeBytes: 1000 }),
    poster: { width: 640, height: 360, dominantColor: "#123456" }
  })
  const B = c.addFolder({ name: "B", parentId: A.id })
  const b1 = c.addFile({ name: "b1.srt", parentId: B.id, sizeBytes: 10, downloadId: "d1" })
  const r1 = c.addFile({ name: "r1.txt", sizeBytes: 5 })
  const r2 = c.addFile({ name: "r2.mkv", sizeBytes: 7, downloadId: "d1" })
  return { e, A, a1, B, b1, r1, r2 }
}

const Schemaless = Schema.Unknown
const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((r) => r.id)
const desc = (values: ReadonlyArray<string>) => [...values].sort().reverse()

describe("GET /files", () => {
  it("lists root items only by default, by id descending, with every field of the spec", async () => {
    const { e, A, r1, r2 } = await sample()
    const page = decode(FilePage, (await call(e, "GET", "/files")).json)
    assert.deepStrictEqual(ids(page.data), desc([A.id, r1.id, r2.id]))
    assert.deepStrictEqual(page.meta, { next_cursor: null, has_more: false })
    const folder = page.data.find((r) => r.id === A.id)
    assert.strictEqual(folder?.type, "folder")
    assert.strictEqual(folder?.kind, "folder")
    assert.isUndefined(folder?.media, "media appears only with include_media")
    assert.isUndefined(folder?.poster)
  })

  it("parent_id lists the direct contents of a folder; download_id only that download's files", async () => {
    const { e, A, a1, B, b1, r2 } = await sample()
    assert.deepStrictEqual(ids(await listAll(e, `parent_id=${A.id}`)), desc([a1.id, B.id]))
    assert.deepStrictEqual(ids(await listAll(e, "download_id=d1")), desc([b1.id, r2.id]))
    assert.deepStrictEqual(ids(await listAll(e, `download_id=d1&parent_id=${B.id}`)), [b1.id])
  })

  it("flatten lists every level; kind restricts further", async () => {
    const { e, A, a1, B, b1, r1, r2 } = await sample()
    assert.deepStrictEqual(ids(await listAll(e, "flatten=true")), desc([A.id, a1.id, B.id, b1.id, r1.id, r2.id]))
    assert.deepStrictEqual(ids(await listAll(e, "flatten=true&kind=video")), desc([a1.id, r2.id]))
    assert.deepStrictEqual(ids(await listAll(e, "kind=folder")), [A.id])
  })

  it("422 rule: flatten=true with a non-empty parent_id", async () => {
    const { e, A } = await sample()
    const result = await call(e, "GET", `/files?flatten=true&parent_id=${A.id}`)
    assert.strictEqual(result.status, 422)
    const error = decode(ErrorEnvelope, result.json).error
    assert.strictEqual(error.code, "validation_failed")
    assert.property(error.details?.fields, "parent_id")
    assert.strictEqual(
      (await call(e, "GET", "/files?flatten=true&parent_id=")).status,
      200,
      "an empty parent_id is allowed"
    )
  })

  it("limit bounds: default 50, 1..100, else validation_failed naming limit", async () => {
    const e = await emulator()
    for (let i = 0; i < 120; i++) e.control.addFile({ name: `f${i}.txt` })
    const first = decode(FilePage, (await call(e, "GET", "/files")).json)
    assert.strictEqual(first.data.length, 50)
    assert.isTrue(first.meta.has_more)
    assert.strictEqual(decode(FilePage, (await call(e, "GET", "/files?limit=100")).json).data.length, 100)
    assert.strictEqual(decode(FilePage, (await call(e, "GET", "/files?limit=1")).json).data.length, 1)
    for (const bad of ["0", "101", "abc", "-1", "1.5"]) {
      const result = await call(e, "GET", `/files?limit=${bad}`)
      assert.strictEqual(result.status, 422, bad)
      assert.property(decode(ErrorEnvelope, result.json).error.details?.fields, "limit")
    }
  })

  it("cursor paging returns every item exactly once, in order", async () => {
    const e = await emulator()
    const made = Array.from({ length: 37 }, (_, i) => e.control.addFile({ name: `f${i}.txt` }).id)
    const seen = await listAll(e, "limit=5")
    assert.deepStrictEqual(ids(seen), desc(made))
  })

  it("a cursor is opaque and signed: altered → 422; bound to its filters → 422 with others", async () => {
    const e = await emulator()
    for (let i = 0; i < 5; i++) e.control.addFile({ name: `f${i}.txt` })
    const page = decode(FilePage, (await call(e, "GET", "/files?limit=2")).json)
    const cursor = page.meta.next_cursor ?? ""
    const altered = `${cursor.slice(0, 3)}${cursor[3] === "A" ? "B" : "A"}${cursor.slice(4)}`
    const bad = await call(e, "GET", `/files?limit=2&cursor=${encodeURIComponent(altered)}`)
    assert.strictEqual(bad.status, 422)
    assert.property(decode(ErrorEnvelope, bad.json).error.details?.fields, "cursor")
    const other = await call(e, "GET", `/files?limit=2&kind=document&cursor=${encodeURIComponent(cursor)}`)
    assert.strictEqual(other.status, 422)
  })

  it("updated_after: only items changed after it, by updated_at ascending, paging included", async () => {
    const { e, A, a1, r1, r2 } = await sample()
    const before = decode(Single(FileRecord), (await call(e, "GET", `/files/${r2.id}`)).json).data.updated_at
    const touched = [
      e.control.rename(a1.id, "a1-renamed.mkv"),
      e.control.rename(r1.id, "r1b.txt"),
      e.control.lock(A.id)
    ]
    const all = await listAll(e, `flatten=true&limit=1&updated_after=${encodeURIComponent(before)}`)
    // a1's rename did not touch A (a rename adds nothing to the folder), so exactly the three edits.
    assert.deepStrictEqual(ids(all), ids(touched))
    const stamps = all.map((r) => r.updated_at)
    assert.deepStrictEqual(stamps, [...stamps].sort())
    assert.deepStrictEqual(
      ids(await listAll(e, `limit=1&updated_after=${encodeURIComponent(before)}`)),
      [r1.id, A.id],
      "root only"
    )
    assert.deepStrictEqual(ids(await listAll(e, `parent_id=${A.id}&updated_after=${encodeURIComponent(before)}`)), [
      a1.id
    ])
    const bad = await call(e, "GET", "/files?updated_after=2026-01-01")
    assert.strictEqual(bad.status, 422)
    assert.property(decode(ErrorEnvelope, bad.json).error.details?.fields, "updated_after")
  })

  it("updated_after order breaks updated_at ties by id ascending", () => {
    const items = [
      { id: "b", updatedAt: 5 },
      { id: "c", updatedAt: 1 },
      { id: "a", updatedAt: 5 },
      { id: "A", updatedAt: 5 }
    ]
    assert.deepStrictEqual(
      [...items].sort(byUpdatedThenId).map((i) => i.id),
      ["c", "A", "a", "b"]
    )
  })

  it("include_media gives the summary in listings; include_poster a content-addressed poster", async () => {
    const { e, A, a1 } = await sample()
    const page = decode(
      FilePage,
      (await call(e, "GET", `/files?parent_id=${A.id}&include_media=true&include_poster=true`)).json
    )
    const video = page.data.find((r) => r.id === a1.id)
    const folder = page.data.find((r) => r.id !== a1.id)
    decode(MediaSummary, video?.media)
    assert.notProperty(video?.media, "video_streams", "listings carry a summary only")
    assert.strictEqual(folder?.media, null)
    assert.strictEqual(folder?.poster, null)
    const poster = video?.poster
    assert.match(poster?.url ?? "", /\/posters\/[0-9a-f]{64}\.webp$/)
    assert.strictEqual(poster?.expires_at, null)
    const image = await fetch(poster?.url ?? "")
    assert.strictEqual(image.status, 200)
    assert.strictEqual(image.headers.get("content-type"), "image/webp")
    const bytes = Buffer.from(await image.arrayBuffer())
    assert.strictEqual(bytes.subarray(0, 4).toString(), "RIFF")
    assert.strictEqual(bytes.subarray(8, 12).toString(), "WEBP")
  })

  it("bad booleans and kinds are validation errors", async () => {
    const e = await emulator()
    const result = await call(e, "GET", "/files?flatten=yes&kind=movie")
    assert.strictEqual(result.status, 422)
    const fields = decode(ErrorEnvelope, result.json).error.details?.fields
    assert.property(fields, "flatten")
    assert.property(fields, "kind")
  })
})

describe("GET /files/{file}", () => {
  it("returns one record with full media detail", async () => {
    const { e, a1 } = await sample()
    const record = decode(Single(FileRecord), (await call(e, "GET", `/files/${a1.id}?include_media=true`)).json).data
    const media = decode(MediaFull, record.media)
    assert.isAbove(media.video_streams.length, 0)
    assert.isAbove(media.chapters.length, 0)
  })

  it("404 for a missing, deleted or other user's item", async () => {
    const { e, a1, r1 } = await sample()
    e.control.remove([r1.id])
    assert.strictEqual((await call(e, "GET", `/files/${r1.id}`)).status, 404)
    assert.strictEqual((await call(e, "GET", "/files/nope")).status, 404)
    const other = e.control.addUser()
    const result = await call(e, "GET", `/files/${a1.id}`, { token: other.accessToken })
    assert.strictEqual(result.status, 404)
    assert.strictEqual(decode(ErrorEnvelope, result.json).error.code, "not_found")
  })
})

describe("POST /files/folder", () => {
  it("creates a folder at the root or in a folder: 201 with the record", async () => {
    const { e, A } = await sample()
    const root = await call(e, "POST", "/files/folder", { body: { name: "New" } })
    assert.strictEqual(root.status, 201)
    const created = decode(Single(FileRecord), root.json).data
    assert.strictEqual(created.parent_id, null)
    assert.strictEqual(created.type, "folder")
    const nested = await call(e, "POST", "/files/folder", { body: { name: "Inner", parent_id: A.id }, token: e.apiKey })
    assert.strictEqual(nested.status, 201)
    assert.strictEqual(decode(Single(FileRecord), nested.json).data.parent_id, A.id)
  })

  it("rejects empty and duplicate names with validation_failed naming the field", async () => {
    const { e, A } = await sample()
    for (const body of [
      { name: "" },
      { name: "   " },
      {},
      { name: 5 },
      { name: "A" },
      { name: "a1.mkv", parent_id: A.id }
    ]) {
      const result = await call(e, "POST", "/files/folder", { body })
      assert.strictEqual(result.status, 422, JSON.stringify(body))
      const error = decode(ErrorEnvelope, result.json).error
      assert.strictEqual(error.code, "validation_failed")
      assert.property(error.details?.fields, "name")
    }
    assert.strictEqual(
      (await call(e, "POST", "/files/folder", { body: { name: "a" } })).status,
      201,
      "names are case-sensitive"
    )
  })

  it("an unknown parent is 404; a file as parent is 422", async () => {
    const { e, r1 } = await sample()
    assert.strictEqual((await call(e, "POST", "/files/folder", { body: { name: "x", parent_id: "nope" } })).status, 404)
    const file = await call(e, "POST", "/files/folder", { body: { name: "x", parent_id: r1.id } })
    assert.strictEqual(file.status, 422)
  })
})

describe("POST /files/delete", () => {
  it("reports deleted / not_found / resource_locked per id with HTTP 200, descendants included", async () => {
    const { e, A, a1, B, b1, r1, r2 } = await sample()
    const locked = e.control.addFolder({ name: "L" })
    const inside = e.control.addFile({ name: "keep.txt", parentId: locked.id, locked: true })
    const other = e.control.addUser()
    const foreign = e.control.addFile({ name: "theirs.txt", userId: other.userId })
    const result = await call(e, "POST", "/files/delete", {
      body: { ids: [A.id, r1.id, "missing", locked.id, foreign.id] }
    })
    assert.strictEqual(result.status, 200)
    assert.deepStrictEqual(decode(Single(Schemaless), result.json).data, [
      { id: A.id, result: "deleted" },
      { id: r1.id, result: "deleted" },
      { id: "missing", result: "not_found" },
      { id: locked.id, result: "resource_locked" },
      { id: foreign.id, result: "not_found" }
    ])
    for (const id of [A.id, a1.id, B.id, b1.id, r1.id]) assert.isUndefined(e.control.item(id), id)
    for (const id of [r2.id, locked.id, inside.id]) assert.isDefined(e.control.item(id), id)
    assert.isDefined(e.control.item(foreign.id, other.userId), "another user's item is untouched")
  })

  it("is idempotent: deleting again reports deleted", async () => {
    const { e, r1 } = await sample()
    await call(e, "POST", "/files/delete", { body: { ids: [r1.id] } })
    const again = await call(e, "POST", "/files/delete", { body: { ids: [r1.id] }, token: e.apiKey })
    assert.deepStrictEqual(decode(Single(Schemaless), again.json).data, [{ id: r1.id, result: "deleted" }])
  })

  it("validates the id list", async () => {
    const e = await emulator()
    for (const body of [{}, { ids: [] }, { ids: "x" }, { ids: ["a", "a"] }, { ids: [1] }]) {
      const result = await call(e, "POST", "/files/delete", { body })
      assert.strictEqual(result.status, 422, JSON.stringify(body))
      assert.property(decode(ErrorEnvelope, result.json).error.details?.fields, "ids")
    }
  })

  it("removal listeners hear every removed id, descendants included", async () => {
    const { e, A, a1, B, b1 } = await sample()
    const heard: Array<string> = []
    e.state.onRemoved((userId, removed) => {
      assert.strictEqual(userId, e.state.primaryUser.id)
      heard.push(...removed)
    })
    await call(e, "POST", "/files/delete", { body: { ids: [A.id] } })
    assert.sameMembers(heard, [A.id, a1.id, B.id, b1.id])
  })
})
