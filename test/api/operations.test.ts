/**
 * Every operation of the spec against a scripted local server: the request it sends
 * (method, path, query, headers, body) and the value it returns.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted, Stream } from "effect"
import {
  isAuthProblem,
  isCursorExpired,
  isInvalidCursor,
  isPaymentRequired,
  isPrecondition,
  mustRestartFeed,
  oauthError
} from "../../src/api/ApiError.ts"
import { DEVICE_CODE_GRANT } from "../../src/api/oauth.ts"
import { items } from "../../src/api/paginate.ts"
import {
  account,
  appState,
  cursor,
  download,
  downloadId,
  fileId,
  fileRecord,
  folderRecord,
  fullMedia,
  page,
  selection,
  selectionId
} from "./fixtures.ts"
import { type Recorded, type Reply, startServer, withClient } from "./testServer.ts"

const CLIENT_ID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"

/** A server answering `routes["METHOD /path"]`; anything else is a 404 envelope. */
const routed = (routes: Record<string, (r: Recorded) => Reply>) =>
  startServer((r) => {
    const route = routes[`${r.method} ${r.path}`]
    return route ? route(r) : { status: 404, body: { error: { code: "not_found", message: `${r.method} ${r.path}` } } }
  })

const json = (r: Recorded): unknown => JSON.parse(r.body.toString())

/** A top-level field of a JSON request body. */
const field = (r: Recorded, name: string): unknown => {
  const body = json(r)
  return typeof body === "object" && body !== null && name in body ? Reflect.get(body, name) : undefined
}

describe("account, files and folders", () => {
  it.live("GET /account", () =>
    Effect.gen(function* () {
      const server = yield* routed({ "GET /api/v1/account": () => ({ body: { data: account } }) })
      const a = yield* withClient(server, (c) => c.account.get)
      assert.strictEqual(a.credits.remaining, 1200)
    })
  )

  it.live("GET /files with every filter and include", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files": () => ({
          body: page([fileRecord({ media: { status: "ready", duration_ms: 1 } })], "c2", true)
        })
      })
      const p = yield* withClient(server, (c) =>
        c.files.list({
          limit: 2,
          cursor: cursor("c1"),
          parentId: fileId("d_1"),
          downloadId: "dl_1",
          kind: "video",
          updatedAfter: "2026-11-01T00:00:00Z",
          includeMedia: true,
          includePoster: true,
          includeState: false
        })
      )
      assert.strictEqual(p.items[0]?.media?.duration_ms, 1)
      assert.strictEqual(p.nextCursor, "c2")
      assert.isTrue(p.hasMore)
      assert.strictEqual(
        server.requests[0]?.url,
        "/api/v1/files?limit=2&cursor=c1&parent_id=d_1&download_id=dl_1&kind=video&updated_after=2026-11-01T00%3A00%3A00Z&include_state=false&include_poster=true&include_media=true"
      )
    })
  )

  it.live("GET /files refuses bad page sizes and flatten with parent_id before sending", () =>
    Effect.gen(function* () {
      const server = yield* routed({})
      const errors = yield* withClient(server, (c) =>
        Effect.all([
          Effect.flip(c.files.list({ limit: 0 })),
          Effect.flip(c.files.list({ limit: 101 })),
          Effect.flip(c.files.list({ flatten: true, parentId: fileId("d_1") })),
          Effect.flip(c.files.list({ updatedAfter: "yesterday" }))
        ])
      )
      assert.deepStrictEqual(
        errors.map((e) => (e.reason._tag === "ClientValidation" ? e.reason.field : e.reason._tag)),
        ["limit", "limit", "flatten", "updated_after"]
      )
      assert.strictEqual(server.requests.length, 0)
    })
  )

  it.live("GET /files/{file} with full media, the id encoded as one path segment", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files/f%2F..%2Fx": () => ({ body: { data: fileRecord({ media: fullMedia }) } })
      })
      const f = yield* withClient(server, (c) => c.files.get(fileId("f/../x"), { includeMedia: true }))
      assert.strictEqual(f.media?.video_streams?.[0]?.codec, "h264")
      assert.strictEqual(server.requests[0]?.query.get("include_media"), "true")
    })
  )

  it.live("POST /files/folder", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/files/folder": () => ({ status: 201, body: { data: folderRecord() } })
      })
      const f = yield* withClient(server, (c) => c.files.createFolder({ name: "Movies", parentId: fileId("d_0") }))
      assert.strictEqual(f.type, "folder")
      assert.deepStrictEqual(json(server.requests[0]!), { name: "Movies", parent_id: "d_0" })
      assert.strictEqual(server.requests[0]?.headers["content-type"], "application/json")
      const empty = yield* withClient(server, (c) => Effect.flip(c.files.createFolder({ name: "  " })))
      assert.strictEqual(empty.reason._tag, "ClientValidation")
    })
  )

  it.live("POST /files/delete returns per-identifier results, and refuses duplicates", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/files/delete": () => ({
          body: {
            data: [
              { id: "f_1", result: "deleted" },
              { id: "f_2", result: "not_found" },
              { id: "f_3", result: "resource_locked" }
            ]
          }
        })
      })
      const results = yield* withClient(server, (c) =>
        c.files.deleteMany([fileId("f_1"), fileId("f_2"), fileId("f_3")])
      )
      assert.deepStrictEqual(
        results.map((r) => r.result),
        ["deleted", "not_found", "resource_locked"]
      )
      assert.deepStrictEqual(json(server.requests[0]!), { ids: ["f_1", "f_2", "f_3"] })
      const dup = yield* withClient(server, (c) => Effect.flip(c.files.deleteMany([fileId("f_1"), fileId("f_1")])))
      assert.strictEqual(dup.reason._tag, "ClientValidation")
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.live("POST /files/{file}/download-link and POST /files/zip", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/files/f_1/download-link": () => ({
          body: { data: { url: "https://cdn.example/f_1?sig=x", expires_at: "2026-11-22T07:00:00Z" } }
        }),
        "POST /api/v1/files/zip": () => ({ body: { data: { url: "https://cdn.example/z.zip", expires_at: null } } })
      })
      const link = yield* withClient(server, (c) => c.files.downloadLink(fileId("f_1")))
      assert.strictEqual(link.expires_at, "2026-11-22T07:00:00Z")
      const zip = yield* withClient(server, (c) => c.files.zip([fileId("f_1"), fileId("d_2")]))
      assert.isNull(zip.expires_at)
      assert.deepStrictEqual(json(server.requests[1]!), { ids: ["f_1", "d_2"] })
    })
  )
})

describe("change feed and pagination", () => {
  it.live("GET /files/changes: one page with live items and tombstones, query kept", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files/changes": () => ({
          body: page([fileRecord({ deleted: false }), { id: "f_9", parent_id: "d_1", deleted: true }], "c-next", false)
        })
      })
      const p = yield* withClient(server, (c) =>
        c.changes.page({ limit: 50, kinds: ["video", "subtitle"], includeMedia: false }, cursor("c-prev"))
      )
      assert.deepStrictEqual(
        p.items.map((i) => i.deleted),
        [false, true]
      )
      assert.strictEqual(p.nextCursor, "c-next")
      assert.strictEqual(
        server.requests[0]?.url,
        "/api/v1/files/changes?limit=50&cursor=c-prev&kind=video%2Csubtitle&include_media=false"
      )
    })
  )

  it.live("streams pages, sending each next_cursor back unchanged, until has_more is false", () =>
    Effect.gen(function* () {
      const odd = "a+b/c==&x=%20y"
      const server = yield* routed({
        "GET /api/v1/files/changes": (r) => {
          const c = r.query.get("cursor")
          if (c === null) return { body: page([{ id: "f_1", parent_id: null, deleted: true }], odd, true) }
          if (c === odd) return { body: page([], "c3", true) }
          return { body: page([{ id: "f_3", parent_id: null, deleted: true }], "c-final", false) }
        }
      })
      const pages = yield* withClient(server, (c) => Stream.runCollect(c.changes.pages({})))
      assert.deepStrictEqual(
        pages.map((p) => [p.items.length, String(p.nextCursor), p.hasMore]),
        [
          [1, odd, true],
          [0, "c3", true],
          [1, "c-final", false]
        ]
      )
      assert.deepStrictEqual(
        server.requests.map((r) => r.query.get("cursor")),
        [null, odd, "c3"]
      )
      const ids = yield* withClient(server, (c) => Stream.runCollect(items(c.changes.pages({}))))
      assert.deepStrictEqual(
        ids.map((i) => i.id),
        ["f_1", "f_3"]
      )
    })
  )

  it.live("a page with has_more and no next_cursor, or repeating its cursor, is a Protocol error", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files": (r) =>
          r.query.get("cursor") === null ? { body: page([], "same", true) } : { body: page([], "same", true) },
        "GET /api/v1/downloads": () => ({ body: page([download], null, true) })
      })
      const loop = yield* withClient(server, (c) => Effect.flip(c.files.listPages().pipe(Stream.runDrain)))
      assert.strictEqual(loop.reason._tag, "Protocol")
      assert.include(loop.message, "repeats")
      const missing = yield* withClient(server, (c) => Effect.flip(c.downloads.list()))
      assert.strictEqual(missing.reason._tag === "Protocol" ? missing.reason.field : "", "meta.next_cursor")
      assert.strictEqual(server.requests.length, 3)
    })
  )

  it.live("410 cursor_expired and 422 on the cursor are told apart from other failures", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files/changes": (r) =>
          r.query.get("cursor") === "old"
            ? { status: 410, body: { error: { code: "cursor_expired", message: "too old" } } }
            : {
                status: 422,
                body: {
                  error: { code: "validation_failed", message: "bad", details: { fields: { cursor: ["altered"] } } }
                }
              }
      })
      const expired = yield* withClient(server, (c) => Effect.flip(c.changes.page({}, cursor("old"))))
      assert.isTrue(isCursorExpired(expired) && mustRestartFeed(expired))
      const altered = yield* withClient(server, (c) => Effect.flip(c.changes.page({}, cursor("tampered"))))
      assert.isTrue(isInvalidCursor(altered) && mustRestartFeed(altered))
      assert.isFalse(isCursorExpired(altered))
    })
  )
})

describe("file state and app storage", () => {
  it.live("GET /files/{file}/state: the state, or null with no ETag", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/files/f_1/state": () => ({ headers: { etag: appState.etag }, body: { data: appState } }),
        "GET /api/v1/files/f_2/state": () => ({ body: { data: null } })
      })
      const s = yield* withClient(server, (c) => c.state.get(fileId("f_1")))
      assert.strictEqual(s?.version, 3)
      assert.isNull(yield* withClient(server, (c) => c.state.get(fileId("f_2"))))
    })
  )

  it.live("PUT /files/{file}/state sends {value} with If-Match or If-None-Match; 412 is Precondition", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "PUT /api/v1/files/f_1/state": (r) =>
          r.headers["if-match"] === '"stale"'
            ? { status: 412, body: { error: { code: "precondition_failed", message: "changed" } } }
            : { headers: { etag: '"st-new"' }, body: { data: { ...appState, version: 4, etag: '"st-new"' } } }
      })
      const stored = yield* withClient(server, (c) =>
        c.state.put(fileId("f_1"), { watched: true }, { ifMatch: '"st-9f2c"' })
      )
      assert.strictEqual(stored.etag, '"st-new"')
      assert.deepStrictEqual(json(server.requests[0]!), { value: { watched: true } })
      assert.strictEqual(server.requests[0]?.headers["if-match"], '"st-9f2c"')
      yield* withClient(server, (c) => c.state.put(fileId("f_1"), {}, { ifNoneMatch: "*" }))
      assert.strictEqual(server.requests[1]?.headers["if-none-match"], "*")
      const stale = yield* withClient(server, (c) =>
        Effect.flip(c.state.put(fileId("f_1"), {}, { ifMatch: '"stale"' }))
      )
      assert.isTrue(isPrecondition(stale))
      assert.strictEqual(server.requests.length, 3)
    })
  )

  it.live("PUT /files/{file}/state refuses non-objects, oversized values and unquoted ETags before sending", () =>
    Effect.gen(function* () {
      const server = yield* routed({})
      const fields = yield* withClient(server, (c) =>
        Effect.all([
          Effect.flip(c.state.put(fileId("f_1"), JSON.parse("[1]"))),
          Effect.flip(c.state.put(fileId("f_1"), { big: "x".repeat(70_000) })),
          Effect.flip(c.state.put(fileId("f_1"), {}, { ifMatch: "st-9f2c" }))
        ])
      )
      assert.deepStrictEqual(
        fields.map((e) => (e.reason._tag === "ClientValidation" ? e.reason.field : e.reason._tag)),
        ["value", "value", "If-Match"]
      )
      assert.strictEqual(server.requests.length, 0)
    })
  )

  it.live("DELETE /files/{file}/state answers 204", () =>
    Effect.gen(function* () {
      const server = yield* routed({ "DELETE /api/v1/files/f_1/state": () => ({ status: 204 }) })
      yield* withClient(server, (c) => c.state.delete(fileId("f_1"), { ifMatch: '"e"' }))
      assert.strictEqual(server.requests[0]?.headers["if-match"], '"e"')
    })
  )

  it.live("app storage: list, get, put (falsy values kept), delete", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/app-storage": () => ({
          body: { data: [{ key: "k", value: 0, version: 1 }], meta: { quota: { keys: 1, max_keys: 256 } } }
        }),
        "GET /api/v1/app-storage/my%20key": () => ({
          headers: { etag: '"s1"' },
          body: { data: { key: "my key", value: false, version: 2 } }
        }),
        "PUT /api/v1/app-storage/my%20key": (r) => ({
          headers: { etag: '"s2"' },
          body: { data: { key: "my key", value: field(r, "value"), version: 3 } }
        }),
        "DELETE /api/v1/app-storage/my%20key": () => ({ status: 204 })
      })
      const list = yield* withClient(server, (c) => c.storage.list())
      assert.strictEqual(list.data[0]?.value, 0)
      const got = yield* withClient(server, (c) => c.storage.get("my key"))
      assert.strictEqual(got.item.value, false)
      assert.strictEqual(got.etag, '"s1"')
      const put = yield* withClient(server, (c) => c.storage.put("my key", null, { ifMatch: "*" }))
      assert.isNull(put.item.value)
      assert.strictEqual(put.etag, '"s2"')
      assert.deepStrictEqual(json(server.requests[2]!), { value: null })
      assert.strictEqual(server.requests[2]?.headers["if-match"], "*")
      yield* withClient(server, (c) => c.storage.delete("my key"))
      assert.strictEqual(server.requests.length, 4)
    })
  )
})

describe("cache, downloads and selections", () => {
  it.live("POST /cache/check sends the hashes and refuses duplicates", () =>
    Effect.gen(function* () {
      const server = yield* routed({ "POST /api/v1/cache/check": () => ({ body: { data: { abc: true } } }) })
      const answer = yield* withClient(server, (c) => c.cache.check(["abc", "def"]))
      assert.deepStrictEqual(answer, { abc: true })
      assert.deepStrictEqual(json(server.requests[0]!), { hashes: ["abc", "def"] })
      const dup = yield* withClient(server, (c) => Effect.flip(c.cache.check(["abc", "ABC"])))
      assert.strictEqual(dup.reason._tag, "ClientValidation")
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.live("GET /downloads pages with client_reference", () =>
    Effect.gen(function* () {
      const server = yield* routed({ "GET /api/v1/downloads": () => ({ body: page([download], null, false) }) })
      const p = yield* withClient(server, (c) => c.downloads.list({ clientReference: "sonarr-123", limit: 10 }))
      assert.strictEqual(p.items[0]?.client_reference, "sonarr-123")
      assert.strictEqual(server.requests[0]?.url, "/api/v1/downloads?limit=10&client_reference=sonarr-123")
    })
  )

  it.live("POST /downloads answers a download (201) or a selection (200)", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/downloads": (r) =>
          field(r, "magnet") !== undefined
            ? { status: 200, body: { data: { kind: "selection", selection } } }
            : { status: 201, body: { data: { kind: "download", download } } }
      })
      const accepted = yield* withClient(server, (c) =>
        c.downloads.create({
          url: "https://files.example/a.iso",
          clientReference: "ref-1",
          webhookUrl: "https://hooks.example.com/dl",
          directory: "/isos"
        })
      )
      assert.strictEqual(accepted.kind === "download" ? accepted.download.attempt : 0, 1)
      assert.deepStrictEqual(json(server.requests[0]!), {
        url: "https://files.example/a.iso",
        client_reference: "ref-1",
        webhook_url: "https://hooks.example.com/dl",
        directory: "/isos"
      })
      const choose = yield* withClient(server, (c) => c.downloads.create({ magnet: "magnet:?xt=urn:btih:abc" }))
      assert.strictEqual(choose.kind === "selection" ? choose.selection.items.length : 0, 2)
      assert.deepStrictEqual(json(server.requests[1]!), { magnet: "magnet:?xt=urn:btih:abc" })
      const refused = yield* withClient(server, (c) =>
        Effect.all([
          Effect.flip(c.downloads.create({ url: "magnet:?xt=urn:btih:abc" })),
          Effect.flip(c.downloads.create({ magnet: "https://a.example/x" }))
        ])
      )
      assert.deepStrictEqual(
        refused.map((e) => (e.reason._tag === "ClientValidation" ? e.reason.field : e.reason._tag)),
        ["url", "magnet"]
      )
      const http = yield* withClient(server, (c) =>
        Effect.flip(c.downloads.create({ url: "https://a.example/x", webhookUrl: "http://insecure.example/" }))
      )
      assert.strictEqual(http.reason._tag === "ClientValidation" ? http.reason.field : "", "webhook_url")
    })
  )

  it.live("POST /downloads/upload sends multipart/form-data with the file and options", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/downloads/upload": () => ({ status: 201, body: { data: { kind: "download", download } } })
      })
      const torrent = new TextEncoder().encode("d8:announce0:e")
      yield* withClient(server, (c) =>
        c.downloads.upload({
          fileName: "linux.torrent",
          content: torrent,
          contentType: "application/x-bittorrent",
          clientReference: "ref-2"
        })
      )
      const req = server.requests[0]!
      assert.match(String(req.headers["content-type"]), /^multipart\/form-data; boundary=/)
      const form = yield* Effect.promise(() =>
        new Response(new Uint8Array(req.body), {
          headers: { "content-type": String(req.headers["content-type"]) }
        }).formData()
      )
      const file = form.get("file")
      assert.isTrue(file instanceof File)
      assert.strictEqual(file instanceof File ? file.name : "", "linux.torrent")
      assert.strictEqual(file instanceof File ? yield* Effect.promise(() => file.text()) : "", "d8:announce0:e")
      assert.strictEqual(form.get("client_reference"), "ref-2")
    })
  )

  it.live("GET, DELETE, cancel and retry of one download", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/downloads/dl_7781": () => ({ body: { data: download } }),
        "DELETE /api/v1/downloads/dl_7781": () => ({ status: 204 }),
        "POST /api/v1/downloads/dl_7781/cancel": () => ({ status: 204 }),
        "POST /api/v1/downloads/dl_7781/retry": () => ({
          body: { data: { ...download, attempt: 2, status: "queued" } }
        })
      })
      const id = downloadId("dl_7781")
      const got = yield* withClient(server, (c) => c.downloads.get(id))
      assert.strictEqual(got.status, "downloading")
      assert.isTrue(Option.isNone(yield* withClient(server, (c) => c.downloads.cancel(id))))
      const retried = yield* withClient(server, (c) => c.downloads.retry(id))
      assert.strictEqual(Option.getOrUndefined(retried)?.attempt, 2)
      yield* withClient(server, (c) => c.downloads.delete(id))
      assert.deepStrictEqual(
        server.requests.map((r) => `${r.method} ${r.path}`),
        [
          "GET /api/v1/downloads/dl_7781",
          "POST /api/v1/downloads/dl_7781/cancel",
          "POST /api/v1/downloads/dl_7781/retry",
          "DELETE /api/v1/downloads/dl_7781"
        ]
      )
    })
  )

  it.live("GET /download-selections/{selection} and POST …/choices", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "GET /api/v1/download-selections/sel_1": () => ({ body: { data: selection } }),
        "POST /api/v1/download-selections/sel_1/choices": () => ({
          status: 201,
          body: { data: { kind: "download", download } }
        })
      })
      const s = yield* withClient(server, (c) => c.selections.get(selectionId("sel_1")))
      assert.strictEqual(s.items.length, 2)
      const outcome = yield* withClient(server, (c) => c.selections.choose(selectionId("sel_1"), "e1"))
      assert.strictEqual(outcome.kind, "download")
      assert.deepStrictEqual(json(server.requests[1]!), { item_id: "e1" })
    })
  )

  it.live("402 and 403 are told apart", () =>
    Effect.gen(function* () {
      const server = yield* routed({
        "POST /api/v1/downloads": () => ({
          status: 402,
          body: { error: { code: "insufficient_credit", message: "no credit" } }
        }),
        "GET /api/v1/app-storage": () => ({
          status: 403,
          body: { error: { code: "forbidden", message: "OAuth only" } }
        })
      })
      const pay = yield* withClient(server, (c) => Effect.flip(c.downloads.create({ url: "https://a.example/x" })))
      assert.isTrue(isPaymentRequired(pay))
      const scope = yield* withClient(server, (c) => Effect.flip(c.storage.list()))
      assert.isTrue(isAuthProblem(scope) && !isPaymentRequired(scope))
    })
  )
})

describe("OAuth endpoints", () => {
  it.live("discovery, device authorization and the three token grants, form-encoded", () =>
    Effect.gen(function* () {
      const token = { token_type: "Bearer", expires_in: 3600, access_token: "at", refresh_token: "rt" }
      const server = yield* routed({
        "GET /.well-known/oauth-authorization-server": () => ({
          body: {
            issuer: "http://127.0.0.1",
            token_endpoint: "http://127.0.0.1/oauth/token",
            grant_types_supported: ["refresh_token"]
          }
        }),
        "POST /oauth/device/authorize": () => ({
          body: {
            device_code: "dc",
            user_code: "ABCD-EFGH",
            verification_uri: "https://svc.example/device",
            verification_uri_complete: "https://svc.example/device?code=ABCD-EFGH",
            expires_in: 600,
            interval: 5
          }
        }),
        "POST /oauth/token": (r) =>
          new URLSearchParams(r.body.toString()).get("device_code") === "pending"
            ? { status: 400, body: { error: "authorization_pending" } }
            : { body: token }
      })
      const meta = yield* withClient(server, (c) => c.oauth.discover)
      assert.deepStrictEqual(meta.grant_types_supported, ["refresh_token"])
      const device = yield* withClient(server, (c) => c.oauth.authorizeDevice(CLIENT_ID))
      assert.strictEqual(device.user_code, "ABCD-EFGH")
      assert.strictEqual(server.requests[1]?.body.toString(), `client_id=${CLIENT_ID}`)
      const verifier = "v".repeat(43)
      yield* withClient(server, (c) =>
        c.oauth.token({
          grantType: "authorization_code",
          code: Redacted.make("code-1"),
          codeVerifier: Redacted.make(verifier),
          clientId: CLIENT_ID,
          redirectUri: "http://127.0.0.1:8123/callback"
        })
      )
      assert.deepStrictEqual(Object.fromEntries(new URLSearchParams(server.requests[2]!.body.toString())), {
        grant_type: "authorization_code",
        code: "code-1",
        code_verifier: verifier,
        client_id: CLIENT_ID,
        redirect_uri: "http://127.0.0.1:8123/callback"
      })
      yield* withClient(server, (c) =>
        c.oauth.token({ grantType: DEVICE_CODE_GRANT, clientId: CLIENT_ID, deviceCode: Redacted.make("dc") })
      )
      assert.strictEqual(new URLSearchParams(server.requests[3]!.body.toString()).get("grant_type"), DEVICE_CODE_GRANT)
      const pending = yield* withClient(server, (c) =>
        Effect.flip(
          c.oauth.token({ grantType: DEVICE_CODE_GRANT, clientId: CLIENT_ID, deviceCode: Redacted.make("pending") })
        )
      )
      assert.deepStrictEqual(oauthError(pending), Option.some("authorization_pending"))
      for (const r of server.requests) assert.isUndefined(r.headers.authorization)
    })
  )

  it.live("refuses a malformed code_verifier or client_id before sending", () =>
    Effect.gen(function* () {
      const server = yield* routed({})
      const errors = yield* withClient(server, (c) =>
        Effect.all([
          Effect.flip(
            c.oauth.token({
              grantType: "authorization_code",
              code: Redacted.make("c"),
              codeVerifier: Redacted.make("short")
            })
          ),
          Effect.flip(c.oauth.authorizeDevice("not-a-uuid"))
        ])
      )
      assert.deepStrictEqual(
        errors.map((e) => (e.reason._tag === "ClientValidation" ? e.reason.field : e.reason._tag)),
        ["code_verifier", "client_id"]
      )
      assert.strictEqual(server.requests.length, 0)
    })
  )
})
