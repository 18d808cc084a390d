import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"

let emulator: RunningEmulator

beforeAll(async () => {
  emulator = await startEmulator({ control: true })
})

afterAll(async () => {
  await emulator.close()
})

const call = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${emulator.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers }
  })

const addFile = (name: string, parentId: string | null = null) =>
  emulator.state.primaryUser.tree.add({ type: "file", parentId, name, kind: "video", mimeType: "video/x-matroska" })

const addFolder = (name: string) =>
  emulator.state.primaryUser.tree.add({ type: "folder", parentId: null, name, kind: "folder", mimeType: "" })

/** The value at a dotted path of parsed JSON ("data.items.0.id"), or undefined. */
const at = (value: unknown, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>((acc, key) => (typeof acc === "object" && acc !== null ? Reflect.get(acc, key) : undefined), value)

const jsonOf = async (response: Response): Promise<unknown> => response.json()

describe("file state over HTTP", () => {
  it("rule 'OAuth only': a personal API key gets 403 in the error envelope", async () => {
    const file = addFile("a.mkv")
    for (const method of ["GET", "PUT", "DELETE"]) {
      const r = await call(`/files/${file.id}/state`, emulator.apiKey, {
        method,
        ...(method === "PUT" ? { body: JSON.stringify({ value: {} }) } : {})
      })
      expect(r.status).toBe(403)
      expect(await jsonOf(r)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } })
      expect(r.headers.get("x-request-id")).toBeTruthy()
    }
  })

  it("rule 'scopes': GET needs files:read + storage:read, PUT needs storage:write", async () => {
    const file = addFile("b.mkv")
    const readOnly = emulator.context.tokens.issue(emulator.state.primaryUser.id, "app-read", [
      "files:read",
      "storage:read"
    ])
    expect((await call(`/files/${file.id}/state`, readOnly.accessToken)).status).toBe(200)
    const put = await call(`/files/${file.id}/state`, readOnly.accessToken, {
      method: "PUT",
      body: JSON.stringify({ value: {} })
    })
    expect(put.status).toBe(403)
    const noFiles = emulator.context.tokens.issue(emulator.state.primaryUser.id, "app-x", [
      "storage:read",
      "storage:write"
    ])
    expect((await call(`/files/${file.id}/state`, noFiles.accessToken)).status).toBe(403)
  })

  it("serves the app_state object with an ETag header, 304 and 204 without bodies", async () => {
    const file = addFile("c.mkv")
    const none = await call(`/files/${file.id}/state`, emulator.accessToken)
    expect([none.status, none.headers.get("etag"), await jsonOf(none)]).toEqual([200, null, { data: null }])
    const put = await call(`/files/${file.id}/state`, emulator.accessToken, {
      method: "PUT",
      headers: { "if-none-match": "*" },
      body: JSON.stringify({ value: { position_ms: 1200 } })
    })
    expect(put.status).toBe(200)
    const etag = put.headers.get("etag")
    expect(at(await jsonOf(put), "data")).toMatchObject({ value: { position_ms: 1200 }, version: 1, etag })
    const notModified = await call(`/files/${file.id}/state`, emulator.accessToken, {
      headers: { "if-none-match": etag ?? "" }
    })
    expect([notModified.status, await notModified.text()]).toEqual([304, ""])
    const stale = await call(`/files/${file.id}/state`, emulator.accessToken, {
      method: "PUT",
      headers: { "if-match": '"stale"' },
      body: JSON.stringify({ value: {} })
    })
    expect(stale.status).toBe(412)
    const deleted = await call(`/files/${file.id}/state`, emulator.accessToken, {
      method: "DELETE",
      headers: { "if-match": etag ?? "" }
    })
    expect([deleted.status, await deleted.text()]).toEqual([204, ""])
  })

  it("supplies app_state to GET /files/{file}?include_state=true and keeps it across rename and move", async () => {
    const folder = addFolder("Shows")
    const file = addFile("d.mkv")
    await call(`/files/${file.id}/state`, emulator.accessToken, {
      method: "PUT",
      body: JSON.stringify({ value: { watched: true } })
    })
    emulator.state.primaryUser.tree.update(file.id, { name: "renamed.mkv" })
    emulator.state.primaryUser.tree.move(file.id, folder.id)
    const detail = await call(`/files/${file.id}?include_state=true`, emulator.accessToken)
    expect(at(await jsonOf(detail), "data.app_state")).toMatchObject({ value: { watched: true }, version: 1 })
    const state = await call(`/files/${file.id}/state`, emulator.accessToken)
    expect(at(await jsonOf(state), "data.value")).toEqual({ watched: true })
  })

  it("rule 'file deletion removes all apps' state, folder descendants included'", async () => {
    const folder = addFolder("Gone")
    const file = addFile("e.mkv", folder.id)
    const other = emulator.context.tokens.issue(emulator.state.primaryUser.id, "app-other", [
      "files:read",
      "storage:read",
      "storage:write"
    ])
    for (const token of [emulator.accessToken, other.accessToken]) {
      const r = await call(`/files/${file.id}/state`, token, {
        method: "PUT",
        body: JSON.stringify({ value: { a: 1 } })
      })
      expect(r.status).toBe(200)
    }
    const removed = await call("/files/delete", emulator.apiKey, {
      method: "POST",
      body: JSON.stringify({ ids: [folder.id] })
    })
    expect(removed.status).toBe(200)
    expect((await call(`/files/${file.id}/state`, emulator.accessToken)).status).toBe(404)
    expect(
      emulator.state.appStateLookup(
        { kind: "oauth", userId: emulator.state.primaryUser.id, clientId: "app-other", scopes: new Set() },
        emulator.state.primaryUser.id,
        file.id
      )
    ).toBeNull()
  })

  it("rule 'token rotation or revocation does not erase state': a new token of the same app sees it", async () => {
    const file = addFile("f.mkv")
    const user = emulator.state.primaryUser.id
    const scopes = ["files:read", "storage:read", "storage:write"]
    const first = emulator.context.tokens.issue(user, "app-rotating", scopes)
    const put = await call(`/files/${file.id}/state`, first.accessToken, { method: "PUT", body: '{"value":{"k":1}}' })
    expect(put.status).toBe(200)
    const revoked = await fetch(`${emulator.authUrl}/_control/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: first.accessToken })
    })
    expect(revoked.status).toBe(200)
    expect((await call(`/files/${file.id}/state`, first.accessToken)).status).toBe(401)
    const second = emulator.context.tokens.issue(user, "app-rotating", scopes)
    const read = await call(`/files/${file.id}/state`, second.accessToken)
    expect(at(await jsonOf(read), "data.value")).toEqual({ k: 1 })
  })

  it("answers 404 for another user's file", async () => {
    const stranger = emulator.state.addUser()
    const theirs = stranger.tree.add({
      type: "file",
      parentId: null,
      name: "x.mkv",
      kind: "video",
      mimeType: "video/x-matroska"
    })
    expect((await call(`/files/${theirs.id}/state`, emulator.accessToken)).status).toBe(404)
  })
})

describe("app storage over HTTP", () => {
  it("rule 'OAuth only': a personal API key gets 403", async () => {
    expect((await call("/app-storage", emulator.apiKey)).status).toBe(403)
    expect((await call("/app-storage/k", emulator.apiKey, { method: "PUT", body: '{"value":1}' })).status).toBe(403)
  })

  it("rule 'storage:read for reads, storage:write for writes and deletion'", async () => {
    const user = emulator.state.primaryUser.id
    const reader = emulator.context.tokens.issue(user, "app-storage-r", ["storage:read"])
    const writer = emulator.context.tokens.issue(user, "app-storage-r", ["storage:write"])
    expect((await call("/app-storage", reader.accessToken)).status).toBe(200)
    expect((await call("/app-storage/k", reader.accessToken, { method: "PUT", body: '{"value":1}' })).status).toBe(403)
    expect((await call("/app-storage/k", writer.accessToken, { method: "PUT", body: '{"value":1}' })).status).toBe(200)
    expect((await call("/app-storage/k", writer.accessToken)).status).toBe(403)
    expect((await call("/app-storage/k", reader.accessToken, { method: "DELETE" })).status).toBe(403)
    expect((await call("/app-storage/k", writer.accessToken, { method: "DELETE" })).status).toBe(204)
  })

  it("creates only once with If-None-Match: *, lists with meta.quota, deletes with 204", async () => {
    const first = await call("/app-storage/cursor", emulator.accessToken, {
      method: "PUT",
      headers: { "if-none-match": "*" },
      body: JSON.stringify({ value: { at: 0 } })
    })
    expect(first.status).toBe(200)
    const etag = first.headers.get("etag") ?? ""
    const again = await call("/app-storage/cursor", emulator.accessToken, {
      method: "PUT",
      headers: { "if-none-match": "*" },
      body: JSON.stringify({ value: { at: 1 } })
    })
    expect(again.status).toBe(412)
    const list = await jsonOf(await call("/app-storage", emulator.accessToken))
    expect(at(list, "meta.quota")).toMatchObject({ keys_limit: 256, bytes_limit: 5 * 1024 * 1024 })
    expect(at(list, "data")).toContainEqual(expect.objectContaining({ key: "cursor", value: { at: 0 } }))
    const weak = await call("/app-storage/cursor", emulator.accessToken, {
      method: "DELETE",
      headers: { "if-match": `W/${etag}` }
    })
    expect(weak.status).toBe(412)
    const gone = await call("/app-storage/cursor", emulator.accessToken, {
      method: "DELETE",
      headers: { "if-match": etag }
    })
    expect([gone.status, await gone.text()]).toEqual([204, ""])
  })
})
