/**
 * Files and folders through the client: GET /files (every filter, both orderings, cursor
 * paging, the flatten + parent_id 422), GET /files/{file}, POST /files/folder,
 * POST /files/delete, POST /files/{file}/download-link (then the CDN with Range) and
 * POST /files/zip.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { items } from "../../src/api/paginate.ts"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import { sampleMedia } from "../../src/emulator/media.ts"
import {
  cursorOf,
  Emulator,
  expectReason,
  fid,
  freshUser,
  logMark,
  prop,
  rawCall,
  requestsSince,
  withClient
} from "./harness.ts"

const POSTER = { width: 640, height: 360, dominantColor: "#203040" }

/** Ids sorted the way the service orders them without updated_after: descending. */
const idsDescending = (ids: ReadonlyArray<string>) => [...ids].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))

/** A small tree for one user: two root folders (one nested), root files of several kinds. */
const seedTree = (e: Emulator["Service"], userId: string) => {
  const c = e.control
  const movies = c.addFolder({ userId, name: "Movies" })
  const nested = c.addFolder({ userId, parentId: movies.id, name: "Nested" })
  const deep = c.addFile({ userId, parentId: nested.id, name: "deep.mkv", sizeBytes: 5_000 })
  const inMovies = c.addFile({ userId, parentId: movies.id, name: "film.mkv", sizeBytes: 9_000 })
  const docs = c.addFolder({ userId, name: "Docs" })
  const readme = c.addFile({ userId, name: "readme.txt", sizeBytes: 10 })
  const song = c.addFile({ userId, name: "song.mp3", sizeBytes: 300 })
  const clip = c.addFile({ userId, name: "clip.mp4", sizeBytes: 700 })
  return { movies, nested, deep, inMovies, docs, readme, song, clip }
}

layer(Emulator.layer())("files", (it) => {
  it.effect("GET /files without filters: root items only, by id descending, paged by next_cursor", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const t = seedTree(e, user.userId)
      const roots = [t.movies, t.docs, t.readme, t.song, t.clip].map((i) => i.id)
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const first = yield* c.files.list({ limit: 2 })
          assert.deepStrictEqual(
            first.items.map((i) => i.id),
            idsDescending(roots).slice(0, 2)
          )
          assert.isTrue(first.hasMore)
          assert.isNotNull(first.nextCursor)
          const pages = yield* Stream.runCollect(c.files.listPages({ limit: 2 }))
          assert.deepStrictEqual(
            pages.map((p) => p.items.length),
            [2, 2, 1]
          )
          assert.deepStrictEqual(
            pages.map((p) => p.hasMore),
            [true, true, false]
          )
          assert.isNull(pages[2]?.nextCursor)
          assert.deepStrictEqual(
            pages.flatMap((p) => p.items.map((i) => i.id)),
            idsDescending(roots)
          )
          const all = yield* c.files.list()
          assert.deepStrictEqual(
            all.items.map((i) => i.id),
            idsDescending(roots)
          )
          const folder = all.items.find((i) => i.id === t.movies.id)
          assert.strictEqual(folder?.type, "folder")
          assert.strictEqual(folder?.kind, "folder")
          assert.isNull(folder?.parent_id)
          // Optional includes are absent unless asked for.
          assert.isFalse("media" in (all.items[0] ?? {}))
          assert.isFalse("poster" in (all.items[0] ?? {}))
          assert.isFalse("app_state" in (all.items[0] ?? {}))
        })
      )
    })
  )

  it.effect("GET /files filters: parent_id (direct contents), flatten (every level), kind, download_id", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const t = seedTree(e, user.userId)
      const fromDownload = e.control.addFile({
        userId: user.userId,
        parentId: t.docs.id,
        name: "got.mkv",
        downloadId: "dl_contract_1"
      })
      const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((i) => i.id)
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(
            ids(yield* c.files.list({ parentId: fid(t.movies.id) })),
            idsDescending([t.nested.id, t.inMovies.id])
          )
          const everything = [t.movies, t.nested, t.deep, t.inMovies, t.docs, t.readme, t.song, t.clip, fromDownload]
          assert.deepStrictEqual(
            ids(yield* c.files.list({ flatten: true })),
            idsDescending(everything.map((i) => i.id))
          )
          assert.deepStrictEqual(
            ids(yield* c.files.list({ flatten: true, kind: "video" })),
            idsDescending([t.deep.id, t.inMovies.id, t.clip.id, fromDownload.id])
          )
          // Other filters still restrict: kind within a folder.
          assert.deepStrictEqual(ids(yield* c.files.list({ parentId: fid(t.movies.id), kind: "folder" })), [
            t.nested.id
          ])
          // Without flatten or parent_id, kind only filters the root level.
          assert.deepStrictEqual(ids(yield* c.files.list({ kind: "audio" })), [t.song.id])
          const byDownload = yield* c.files.list({ downloadId: "dl_contract_1" })
          assert.deepStrictEqual(ids(byDownload), [fromDownload.id])
          assert.strictEqual(byDownload.items[0]?.download_id, "dl_contract_1")
          // Paging keeps the filters: every page of a flat video listing.
          const paged = yield* Stream.runCollect(items(c.files.listPages({ flatten: true, kind: "video", limit: 1 })))
          assert.deepStrictEqual(
            paged.map((i) => i.id),
            idsDescending([t.deep.id, t.inMovies.id, t.clip.id, fromDownload.id])
          )
        })
      )
    })
  )

  it.effect("GET /files?updated_after: changed items only, by updated_at ascending (ties by id), paged", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const t = seedTree(e, user.userId)
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const before = (yield* c.files.get(fid(t.clip.id))).updated_at
          // Changed after the mark: the oldest item renamed, a deep file moved to the root.
          e.control.rename(t.movies.id, "Films", user.userId)
          e.control.move(t.deep.id, null, user.userId)
          const listing = yield* Stream.runCollect(
            items(c.files.listPages({ flatten: true, updatedAfter: before, limit: 2 }))
          )
          assert.isTrue(listing.length >= 2)
          for (const [k, record] of listing.entries()) {
            assert.isTrue(record.updated_at > before, `${record.updated_at} is after ${before}`)
            assert.notStrictEqual(record.id, t.clip.id)
            const prev = listing[k - 1]
            if (prev !== undefined) {
              const ordered =
                prev.updated_at < record.updated_at || (prev.updated_at === record.updated_at && prev.id < record.id)
              assert.isTrue(ordered, `${prev.id}@${prev.updated_at} before ${record.id}@${record.updated_at}`)
            }
          }
          const names = listing.map((i) => i.name)
          assert.include(names, "Films")
          assert.include(names, "deep.mkv")
          // Unchanged items are not reported.
          assert.notInclude(names, "readme.txt")
        })
      )
    })
  )

  it.effect("include_media (summary), include_poster and include_state (OAuth only) on listings", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const video = e.control.addFile({
        userId: user.userId,
        name: "poster.mkv",
        sizeBytes: 1_000_000,
        media: sampleMedia({ title: "Poster", seed: 2, sizeBytes: 1_000_000 }),
        poster: POSTER
      })
      const text = e.control.addFile({ userId: user.userId, name: "notes.txt" })
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const page = yield* c.files.list({ includeMedia: true, includePoster: true })
          const v = page.items.find((i) => i.id === video.id)
          const n = page.items.find((i) => i.id === text.id)
          assert.strictEqual(v?.media?.status, "ready")
          assert.strictEqual(v?.media?.title, "Poster")
          assert.isAbove(v?.media?.duration_ms ?? 0, 0)
          // A summary: no per-stream detail in listings.
          assert.isUndefined(v?.media?.video_streams)
          assert.isUndefined(v?.media?.chapters)
          assert.isNull(n?.media)
          assert.isNull(n?.poster)
          assert.strictEqual(v?.poster?.mime_type, "image/webp")
          assert.isNull(v?.poster?.expires_at)
          assert.isAtMost(v?.poster?.width ?? 9999, 640)
          assert.match(v?.poster?.dominant_color ?? "", /^#[0-9a-fA-F]{6}$/)
          const poster = yield* rawCall("GET", v?.poster?.url ?? "")
          assert.strictEqual(poster.status, 200)
          // include_state needs OAuth: a personal API key is refused.
          yield* expectReason(c.files.list({ includeState: true }), "Forbidden", 403)
        })
      )
      const withState = yield* withClient(user.accessToken, (c) => c.files.list({ includeState: true }))
      assert.isTrue(withState.items.every((i) => i.app_state === null))
    })
  )

  it.effect("flatten=true with a parent_id is refused by the client without sending, and by the server with 422", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const folder = e.control.addFolder({ userId: user.userId, name: "F" })
      const mark = yield* logMark
      const refused = yield* expectReason(
        withClient(user.apiKey, (c) => c.files.list({ flatten: true, parentId: fid(folder.id) })),
        "ClientValidation"
      )
      assert.strictEqual(refused.field, "flatten")
      assert.strictEqual((yield* requestsSince(mark)).length, 0)
      // The same request sent raw: the server's 422 validation_failed names the field.
      const raw = yield* rawCall("GET", `${e.baseUrl}/files?flatten=true&parent_id=${folder.id}`, {
        bearer: user.apiKey
      })
      assert.strictEqual(raw.status, 422)
      const error = prop(raw.json, "error")
      assert.strictEqual(prop(error, "code"), "validation_failed")
      assert.isArray(prop(prop(prop(error, "details"), "fields"), "parent_id"))
      assert.isNotNull(raw.headers.get("x-request-id"))
    })
  )

  it.effect("page size bounds: the client refuses 0 and 101; the server answers 422 for them", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      for (const limit of [0, 101]) {
        const refused = yield* expectReason(
          withClient(user.apiKey, (c) => c.files.list({ limit })),
          "ClientValidation"
        )
        assert.strictEqual(refused.field, "limit")
        const raw = yield* rawCall("GET", `${e.baseUrl}/files?limit=${limit}`, { bearer: user.apiKey })
        assert.strictEqual(raw.status, 422)
      }
    })
  )

  it.effect("an altered listing cursor is a 422 about the cursor (InvalidCursor)", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      for (const name of ["a.txt", "b.txt", "c.txt"]) e.control.addFile({ userId: user.userId, name })
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const first = yield* c.files.list({ limit: 1 })
          const cursor = first.nextCursor ?? ""
          const altered = cursorOf(`${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`)
          const reason = yield* expectReason(c.files.list({ limit: 1, cursor: altered }), "InvalidCursor", 422)
          assert.strictEqual(reason.code, "validation_failed")
        })
      )
    })
  )

  it.effect(
    "GET /files/{file}: one record; media carries full stream detail; 404 for missing and other users' ids",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        const other = yield* freshUser
        const media = sampleMedia({ title: "Detail", seed: 3, sizeBytes: 2_000_000, languages: ["eng", "deu"] })
        const video = e.control.addFile({
          userId: user.userId,
          name: "detail.mkv",
          sizeBytes: 2_000_000,
          media,
          poster: POSTER
        })
        const theirs = e.control.addFile({ userId: other.userId, name: "theirs.mkv" })
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const plain = yield* c.files.get(fid(video.id))
            assert.strictEqual(plain.id, video.id)
            assert.strictEqual(plain.name, "detail.mkv")
            assert.strictEqual(plain.kind, "video")
            assert.strictEqual(plain.size_bytes, 2_000_000)
            assert.isFalse(plain.locked)
            assert.isFalse("media" in plain)
            const full = yield* c.files.get(fid(video.id), { includeMedia: true, includePoster: true })
            assert.strictEqual(full.media?.video_streams?.length, media.video_streams.length)
            assert.strictEqual(full.media?.audio_streams?.length, 2)
            assert.deepStrictEqual(
              full.media?.audio_streams?.map((s) => s.language),
              ["eng", "deu"]
            )
            assert.strictEqual(full.media?.chapters?.length, media.chapters.length)
            assert.strictEqual(full.media?.video_streams?.[0]?.codec, media.video_streams[0]?.codec)
            assert.strictEqual(full.poster?.width, 640)
            yield* expectReason(c.files.get(fid("i_does_not_exist")), "NotFound", 404)
            yield* expectReason(c.files.get(fid(theirs.id)), "NotFound", 404)
          })
        )
      })
  )

  it.effect(
    "POST /files/folder: 201 with the record, at the root or in a folder; duplicate and empty names refused",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const mark = yield* logMark
            const root = yield* c.files.createFolder({ name: "Series" })
            assert.strictEqual((yield* requestsSince(mark)).at(-1)?.status, 201)
            assert.strictEqual(root.name, "Series")
            assert.strictEqual(root.type, "folder")
            assert.isNull(root.parent_id)
            const child = yield* c.files.createFolder({ name: "Season 1", parentId: root.id })
            assert.strictEqual(child.parent_id, root.id)
            assert.deepStrictEqual(yield* c.files.get(child.id), child)
            assert.deepStrictEqual(
              (yield* c.files.list({ parentId: root.id })).items.map((i) => i.id),
              [child.id]
            )
            // A name already used in the same folder: the server's validation error names the field.
            const duplicate = yield* expectReason(c.files.createFolder({ name: "Series" }), "Validation", 422)
            assert.strictEqual(duplicate.code, "validation_failed")
            assert.isAbove(duplicate.fields.name?.length ?? 0, 0)
            // The same name in another folder is fine.
            yield* c.files.createFolder({ name: "Series", parentId: root.id })
            // An empty name: refused before sending.
            const empty = yield* expectReason(c.files.createFolder({ name: "" }), "ClientValidation")
            assert.strictEqual(empty.field, "name")
            yield* expectReason(c.files.createFolder({ name: "x", parentId: fid("i_missing") }), "NotFound", 404)
          })
        )
        // The server's own answer to an empty name.
        const raw = yield* rawCall("POST", `${e.baseUrl}/files/folder`, {
          bearer: user.apiKey,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "", parent_id: null })
        })
        assert.strictEqual(raw.status, 422)
        assert.strictEqual(prop(prop(raw.json, "error"), "code"), "validation_failed")
        assert.isArray(prop(prop(prop(prop(raw.json, "error"), "details"), "fields"), "name"))
      })
  )

  it.effect("POST /files/delete: 200 with deleted / not_found / resource_locked per id; folders take descendants", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const other = yield* freshUser
      const t = seedTree(e, user.userId)
      const guarded = e.control.addFolder({ userId: user.userId, name: "Guarded" })
      const locked = e.control.addFile({ userId: user.userId, parentId: guarded.id, name: "keep.mkv", locked: true })
      const theirs = e.control.addFile({ userId: other.userId, name: "theirs.txt" })
      yield* withClient(user.apiKey, (c) =>
        Effect.gen(function* () {
          const results = yield* c.files.deleteMany(
            [t.movies.id, t.readme.id, guarded.id, theirs.id, "i_never_existed"].map((id) => fid(id))
          )
          assert.deepStrictEqual(
            results.map((r) => [r.id, r.result]),
            [
              [t.movies.id, "deleted"],
              [t.readme.id, "deleted"],
              [guarded.id, "resource_locked"],
              [theirs.id, "not_found"],
              ["i_never_existed", "not_found"]
            ]
          )
          // The folder went with its descendants; the locked subtree stayed whole.
          for (const gone of [t.movies, t.nested, t.deep, t.inMovies, t.readme]) {
            yield* expectReason(c.files.get(fid(gone.id)), "NotFound", 404)
          }
          assert.strictEqual((yield* c.files.get(fid(locked.id))).locked, true)
          assert.strictEqual((yield* c.files.get(fid(guarded.id))).id, guarded.id)
          assert.isDefined(e.control.item(theirs.id, other.userId))
          // Duplicates and empty lists are refused before sending.
          yield* expectReason(c.files.deleteMany([fid(t.song.id), fid(t.song.id)]), "ClientValidation")
          yield* expectReason(c.files.deleteMany([]), "ClientValidation")
        })
      )
    })
  )

  it.effect("download link: a CDN URL with its own expiry; the CDN serves Range without a bearer; locked refused", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "movie.mkv", sizeBytes: 300_000 })
      const locked = e.control.addFile({ userId: user.userId, name: "locked.mkv", sizeBytes: 10, locked: true })
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const link = yield* c.files.downloadLink(fid(file.id))
          assert.strictEqual(new URL(link.url).origin, new URL(e.cdnUrl).origin)
          assert.notStrictEqual(new URL(link.url).origin, new URL(e.baseUrl).origin)
          assert.isAbove(Date.parse(link.expires_at ?? ""), e.state.clock.nowMs())
          const ranged = yield* Effect.promise(async () => {
            const response = await fetch(link.url, { headers: { range: "bytes=70000-70099" } })
            return {
              status: response.status,
              contentRange: response.headers.get("content-range"),
              bytes: Buffer.from(await response.arrayBuffer())
            }
          })
          assert.strictEqual(ranged.status, 206)
          assert.strictEqual(ranged.contentRange, "bytes 70000-70099/300000")
          const expected = Buffer.alloc(100)
          fillContent(contentKey(file.id), 70_000, expected)
          assert.isTrue(ranged.bytes.equals(expected))
          const refused = yield* expectReason(c.files.downloadLink(fid(locked.id)), "Forbidden", 403)
          assert.isDefined(refused.code)
          yield* expectReason(c.files.downloadLink(fid("i_missing")), "NotFound", 404)
        })
      )
    })
  )

  it.effect(
    "POST /files/zip: one ZIP URL in the answer (expires_at null) that serves a ZIP; locked content refused",
    () =>
      Effect.gen(function* () {
        const e = yield* Emulator
        const user = yield* freshUser
        const t = seedTree(e, user.userId)
        const locked = e.control.addFile({ userId: user.userId, name: "locked.bin", sizeBytes: 10, locked: true })
        yield* withClient(user.apiKey, (c) =>
          Effect.gen(function* () {
            const zip = yield* c.files.zip([fid(t.nested.id), fid(t.readme.id)])
            assert.isNull(zip.expires_at)
            const fetched = yield* Effect.promise(async () => {
              const response = await fetch(zip.url)
              return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) }
            })
            assert.strictEqual(fetched.status, 200)
            assert.strictEqual(fetched.bytes.readUInt32LE(0), 0x04034b50)
            assert.isTrue(fetched.bytes.includes(Buffer.from("deep.mkv")))
            assert.isTrue(fetched.bytes.includes(Buffer.from("readme.txt")))
            yield* expectReason(c.files.zip([fid(t.readme.id), fid(locked.id)]), "Forbidden", 403)
          })
        )
      })
  )

  it.effect("the bearer never reaches the CDN origin: links, ZIPs and posters are fetched without it", () =>
    Effect.gen(function* () {
      const e = yield* Emulator
      const user = yield* freshUser
      const file = e.control.addFile({ userId: user.userId, name: "p.mkv", sizeBytes: 1000, poster: POSTER })
      const mark = yield* logMark
      yield* withClient(user.accessToken, (c) =>
        Effect.gen(function* () {
          const link = yield* c.files.downloadLink(fid(file.id))
          const zip = yield* c.files.zip([fid(file.id)])
          const record = yield* c.files.get(fid(file.id), { includePoster: true })
          for (const url of [link.url, zip.url, record.poster?.url ?? ""]) {
            assert.strictEqual((yield* rawCall("GET", url)).status, 200)
          }
        })
      )
      const api = yield* requestsSince(mark, "api")
      const cdn = yield* requestsSince(mark, "cdn")
      // The log does record Authorization: every API request carried the bearer…
      assert.strictEqual(api.length, 3)
      assert.isTrue(api.every((r) => r.headers.authorization === `Bearer ${user.accessToken}`))
      // …and none of the CDN requests did.
      assert.strictEqual(cdn.length, 3)
      assert.isTrue(cdn.every((r) => r.headers.authorization === undefined))
    })
  )
})
