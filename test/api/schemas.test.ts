import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { type ApiResponse, decodeBody } from "../../src/api/ApiHttp.ts"
import { Account } from "../../src/api/schemas/account.ts"
import { DataEnvelope, PageEnvelope } from "../../src/api/schemas/common.ts"
import { Download, DownloadOutcome, Selection } from "../../src/api/schemas/downloads.ts"
import { ErrorEnvelope } from "../../src/api/schemas/errorEnvelope.ts"
import { BulkDeleteResult, ChangeItem, FileRecord, Media, Poster, SignedLink } from "../../src/api/schemas/files.ts"
import { DeviceAuthorization, OAuthErrorBody, OAuthServerMetadata, TokenResponse } from "../../src/api/schemas/oauth.ts"
import { ServiceList } from "../../src/api/schemas/services.ts"
import { StorageItem, StorageList } from "../../src/api/schemas/storage.ts"
import { account, appState, download, fileRecord, folderRecord, fullMedia, poster, selection } from "./fixtures.ts"

const ok = <S extends Schema.Decoder<unknown>>(schema: S, input: unknown): S["Type"] => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  if (Exit.isFailure(exit)) assert.fail(`expected success, got ${String(exit.cause)}`)
  return exit.value
}

const fails = (schema: Schema.Decoder<unknown>, input: unknown) =>
  assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(schema)(input)), `expected ${JSON.stringify(input)} to fail`)

/** Decodes `body` as a response would be, returning the Protocol reason's field and request id. */
const protocolFailure = (schema: Schema.Decoder<unknown>, body: unknown) =>
  Effect.gen(function* () {
    const response: ApiResponse = {
      operation: "GET /test",
      status: 200,
      headers: {},
      text: typeof body === "string" ? body : JSON.stringify(body),
      requestId: "req-abc"
    }
    const error = yield* Effect.flip(decodeBody(schema)(response))
    assert.strictEqual(error.reason._tag, "Protocol")
    return error
  })

describe("file and folder records", () => {
  it("decodes a file, a folder and every optional include", () => {
    const file = ok(FileRecord, fileRecord({ media: fullMedia, poster, app_state: appState }))
    assert.strictEqual(file.id, "f_01HZX3K9M2")
    assert.strictEqual(file.media?.video_streams?.[0]?.hdr, false)
    assert.strictEqual(file.media?.audio_streams?.[0]?.channel_layout, "5.1")
    assert.strictEqual(file.media?.subtitle_streams?.[0]?.language, "fra")
    assert.strictEqual(file.poster?.dominant_color, "#1a2b3c")
    assert.strictEqual(file.app_state?.etag, '"st-9f2c"')
    const folder = ok(FileRecord, folderRecord())
    assert.isNull(folder.parent_id)
    assert.isUndefined(folder.media)
  })

  it("accepts null includes (requested, unavailable) and a listing's media summary", () => {
    const file = ok(FileRecord, fileRecord({ media: null, poster: null, app_state: null }))
    assert.isNull(file.media)
    assert.isNull(file.poster)
    assert.isNull(file.app_state)
    assert.strictEqual(ok(Media, { status: "pending" }).status, "pending")
  })

  it("keeps unknown enum values as strings and ignores extra fields", () => {
    const file = ok(FileRecord, fileRecord({ kind: "ebook", type: "symlink", brand_new_field: { x: 1 } }))
    assert.strictEqual(file.kind, "ebook")
    assert.strictEqual(file.type, "symlink")
    assert.strictEqual(ok(Media, { status: "transcoding" }).status, "transcoding")
  })

  it("refuses missing fields, wrong types and nulls where none are allowed", () => {
    const { name: _, ...noName } = fileRecord()
    fails(FileRecord, noName)
    fails(FileRecord, fileRecord({ size_bytes: "734003200" }))
    fails(FileRecord, fileRecord({ locked: "false" }))
    fails(FileRecord, fileRecord({ name: null }))
    fails(FileRecord, fileRecord({ id: 42 }))
    fails(FileRecord, fileRecord({ size_bytes: -1 }))
    fails(FileRecord, fileRecord({ size_bytes: 1.5 }))
    fails(Poster, { ...poster, expires_at: "2026-01-01T00:00:00Z" })
    fails(FileRecord, null)
    fails(FileRecord, [fileRecord()])
  })

  it("refuses int64 values JSON cannot carry exactly (beyond 2^53)", () => {
    const parsed: unknown = JSON.parse(JSON.stringify(fileRecord()).replace("734003200", "9007199254740993"))
    fails(FileRecord, parsed)
    ok(FileRecord, fileRecord({ size_bytes: Number.MAX_SAFE_INTEGER }))
    fails(Media, { status: "ready", duration_ms: 2 ** 60 })
  })

  it.effect("names the field path and the request id when a documented field is wrong", () =>
    Effect.gen(function* () {
      const body = {
        data: [fileRecord(), fileRecord({ size_bytes: "big" })],
        meta: { next_cursor: null, has_more: false }
      }
      const error = yield* protocolFailure(PageEnvelope(FileRecord), body)
      assert.strictEqual(error.reason._tag === "Protocol" ? error.reason.field : undefined, "data[1].size_bytes")
      assert.include(error.message, "data[1].size_bytes")
      assert.include(error.message, "req-abc")
      const nested = yield* protocolFailure(DataEnvelope(FileRecord), {
        data: fileRecord({ media: { ...fullMedia, audio_streams: [{ channels: "six" }] } })
      })
      assert.include(nested.message, "data.media.audio_streams[0].channels")
    })
  )

  it.effect("reports a body that is not JSON, or absent, as a Protocol error", () =>
    Effect.gen(function* () {
      const html = yield* protocolFailure(DataEnvelope(FileRecord), "<html>oops</html>")
      assert.include(html.message, "not valid JSON")
      const empty = yield* protocolFailure(DataEnvelope(FileRecord), "")
      assert.include(empty.message, "no")
    })
  )
})

describe("change feed items", () => {
  it("tells live items from tombstones by `deleted`", () => {
    const live = ok(ChangeItem, fileRecord({ deleted: false }))
    assert.isFalse(live.deleted)
    const gone = ok(ChangeItem, { id: "f_1", parent_id: null, deleted: true })
    assert.isTrue(gone.deleted)
    assert.deepStrictEqual(Object.keys(gone).sort(), ["deleted", "id", "parent_id"])
  })

  it("refuses a live item without its fields, and a tombstone without parent_id", () => {
    fails(ChangeItem, { id: "f_1", parent_id: null, deleted: false })
    fails(ChangeItem, { id: "f_1", deleted: true })
    fails(ChangeItem, fileRecord({ deleted: "yes" }))
    fails(ChangeItem, fileRecord())
  })
})

describe("account", () => {
  it("decodes plan, credits and limits, with null caps and a free plan", () => {
    const a = ok(Account, account)
    assert.strictEqual(a.limits.daily_download_bytes?.limit, 1_099_511_627_776)
    assert.isNull(a.limits.concurrent_torrents)
    assert.isNull(ok(Account, { ...account, plan: null }).plan)
  })

  it("refuses a missing limit key or a string credit", () => {
    const { concurrent_torrents: _, ...limits } = account.limits
    fails(Account, { ...account, limits })
    fails(Account, { ...account, credits: { remaining: "12" } })
  })
})

describe("downloads and selections", () => {
  it("decodes the named fields and keeps the rest verbatim", () => {
    const d = ok(Download, download)
    assert.strictEqual(d.attempt, 1)
    assert.strictEqual(d.progress, 0.42)
    assert.strictEqual(ok(Download, { ...download, status: "paused_by_admin" }).status, "paused_by_admin")
    fails(Download, { ...download, can_cancel: "yes" })
    fails(Download, { attempt: 1 })
    const s = ok(Selection, selection)
    assert.strictEqual(s.items[1]?.selectable, true)
    assert.strictEqual(s.items[1]?.name, "Episode 1")
    fails(Selection, { ...selection, items: [{ item_id: "x" }] })
  })

  it("tells a selection outcome from a download outcome and refuses other kinds", () => {
    const sel = ok(DownloadOutcome, { kind: "selection", selection })
    assert.strictEqual(sel.kind, "selection")
    const dl = ok(DownloadOutcome, { kind: "download", download })
    assert.strictEqual(dl.kind === "download" ? dl.download.id : "", "dl_7781")
    fails(DownloadOutcome, { kind: "queued_elsewhere" })
    fails(DownloadOutcome, { kind: "download" })
  })
})

describe("services, storage, links, bulk delete", () => {
  it("decodes a service list with url_patterns and keeps entry fields", () => {
    const list = ok(ServiceList, {
      data: [
        { code: "yt", name: "Video site", url_patterns: [{ source: "^https://v\\.example/", flags: "i" }] },
        { code: "ftp", url_patterns: [] }
      ],
      meta: { pattern_version: "2026-11-01" }
    })
    assert.strictEqual(list.data[0]?.url_patterns?.[0]?.flags, "i")
    assert.strictEqual(list.data[0]?.name, "Video site")
    fails(ServiceList, { data: [{ url_patterns: [{ source: 1, flags: "" }] }] })
  })

  it("keeps every JSON value of a storage item, null and falsy ones included", () => {
    for (const value of [null, false, 0, "", [], {}, { a: [1, { b: null }] }]) {
      assert.deepStrictEqual(ok(StorageItem, { key: "k", value, version: 2 }).value, value)
    }
    fails(StorageItem, { key: "k" })
    ok(StorageList, { data: [], meta: { quota: { keys: 3, bytes: 10 } } })
  })

  it("decodes signed links and bulk-delete results with unknown result values", () => {
    assert.isNull(ok(SignedLink, { url: "https://cdn.example/z.zip?sig=x", expires_at: null }).expires_at)
    fails(SignedLink, { expires_at: null })
    assert.strictEqual(ok(BulkDeleteResult, { id: "f_1", result: "queued" }).result, "queued")
  })
})

describe("OAuth shapes and error envelopes", () => {
  it("decodes device authorization, token response and metadata", () => {
    const device = ok(DeviceAuthorization, {
      device_code: "dc_secret",
      user_code: "ABCD-EFGH",
      verification_uri: "https://svc.example/device",
      verification_uri_complete: "https://svc.example/device?user_code=ABCD-EFGH",
      expires_in: 600,
      interval: 5
    })
    assert.strictEqual(device.interval, 5)
    fails(DeviceAuthorization, { device_code: "x", user_code: "A", expires_in: 600, interval: 5 })
    const token = ok(TokenResponse, { token_type: "Bearer", expires_in: 3600, access_token: "at", refresh_token: "rt" })
    assert.strictEqual(token.expires_in, 3600)
    fails(TokenResponse, { token_type: "Bearer", expires_in: "3600", access_token: "at", refresh_token: "rt" })
    fails(TokenResponse, { token_type: "Bearer", expires_in: 3600, access_token: "", refresh_token: "rt" })
    const meta = ok(OAuthServerMetadata, { token_endpoint: "https://svc.example/oauth/token", x_custom: true })
    assert.strictEqual(meta.x_custom, true)
    fails(OAuthServerMetadata, { grant_types_supported: "device_code" })
  })

  it("decodes the public error envelope and the OAuth error object", () => {
    const e = ok(ErrorEnvelope, {
      error: { code: "validation_failed", message: "bad", details: { fields: { name: ["required"] } } }
    })
    assert.deepStrictEqual(e.error.details?.fields?.name, ["required"])
    ok(ErrorEnvelope, { error: { code: "something_new" } })
    fails(ErrorEnvelope, { error: { message: "no code" } })
    const o = ok(OAuthErrorBody, { error: "unsupported_grant_type", hint: "use device_code" })
    assert.strictEqual(o.hint, "use device_code")
    fails(OAuthErrorBody, { error: 400 })
  })
})
