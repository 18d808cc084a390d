import { createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningEmulator, startEmulator } from "../../src/emulator/server.ts"

let emulator: RunningEmulator
let receiver: Server
let receiverUrl = ""
const deliveries: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = []
let delivered: () => void = () => {}

beforeAll(async () => {
  emulator = await startEmulator({ control: true })
  const settings = await fetch(`${emulator.authUrl}/_control/webhooks/settings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ allow_loopback_http: true, min_interval_ms: 10 })
  })
  expect(settings.status).toBe(204)
  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(204).end()
      delivered()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  receiverUrl = `http://127.0.0.1:${address.port}/hooks/dl`
})

afterAll(async () => {
  await emulator.close()
  await new Promise<void>((resolve) => {
    receiver.close(() => resolve())
    receiver.closeAllConnections()
  })
})

const api = (path: string, init: RequestInit = {}, token = emulator.apiKey) =>
  fetch(`${emulator.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers }
  })

/** The value at a dotted path of parsed JSON ("data.items.0.id"), or undefined. */
const at = (value: unknown, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>((acc, key) => (typeof acc === "object" && acc !== null ? Reflect.get(acc, key) : undefined), value)

const jsonOf = async (response: Response): Promise<unknown> => response.json()

describe("downloads over HTTP", () => {
  it("creates a download, completes it through /_control, and its files appear under directory", async () => {
    const created = await api("/downloads", {
      method: "POST",
      body: JSON.stringify({
        url: "https://cdn.example.com/path/Home%20Video.mp4",
        directory: "Inbox/Videos",
        client_reference: "r1"
      })
    })
    expect(created.status).toBe(201)
    const data = at(await jsonOf(created), "data")
    const id = String(at(data, "download.id"))
    expect(data).toMatchObject({ kind: "download", download: { attempt: 1, client_reference: "r1" } })
    const complete = await fetch(`${emulator.authUrl}/_control/downloads/${id}/complete`, {
      method: "POST"
    })
    expect(complete.status).toBe(204)
    const done = await jsonOf(await api(`/downloads/${id}`))
    expect(at(done, "data.status")).toBe("completed")
    const file = await jsonOf(await api(`/files/${String(at(done, "data.file_id"))}`))
    expect(at(file, "data")).toMatchObject({ name: "Home Video.mp4", type: "file", download_id: id })
    const parent = await jsonOf(await api(`/files/${String(at(file, "data.parent_id"))}`))
    expect(at(parent, "data.name")).toBe("Videos")
    const listed = await jsonOf(await api("/downloads?client_reference=r1"))
    expect(at(listed, "data.0.id")).toBe(id)
    expect(at(listed, "data.1")).toBeUndefined()
  })

  it("advances by the emulator clock with timings set through /_control", async () => {
    const timings = await fetch(`${emulator.authUrl}/_control/downloads/timings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ processing_ms: 100, downloading_ms: 200, finalizing_ms: 100 })
    })
    expect(timings.status).toBe(204)
    const created = await api("/downloads", {
      method: "POST",
      body: JSON.stringify({ url: "https://cdn.example.com/t.bin" })
    })
    const id = String(at(await jsonOf(created), "data.download.id"))
    emulator.state.clock.advance(150)
    expect(at(await jsonOf(await api(`/downloads/${id}`)), "data.status")).toBe("downloading")
    emulator.state.clock.advance(250)
    expect(at(await jsonOf(await api(`/downloads/${id}`)), "data.status")).toBe("completed")
  })

  it("steps one download through /_control: advance, block with a message, unblock, fail; 409 once it cannot", async () => {
    const created = await api("/downloads", {
      method: "POST",
      body: JSON.stringify({ url: "https://cdn.example.com/steps.bin" })
    })
    const id = String(at(await jsonOf(created), "data.download.id"))
    const step = (name: string, body?: unknown) =>
      fetch(`${emulator.authUrl}/_control/downloads/${id}/${name}`, {
        method: "POST",
        ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      })
    const download = async () => at(await jsonOf(await api(`/downloads/${id}`)), "data")
    const before = at(await download(), "status")
    expect((await step("advance")).status).toBe(204)
    expect(at(await download(), "status")).not.toBe(before)
    expect((await step("block", { message: "verify your account" })).status).toBe(204)
    expect(await download()).toMatchObject({
      status: "blocked",
      error: { code: "account_attention_required", message: "verify your account" }
    })
    const advanceBlocked = await step("advance")
    expect(advanceBlocked.status).toBe(409)
    expect(at(await jsonOf(advanceBlocked), "error.code")).toBe("cannot_advance")
    expect((await step("unblock")).status).toBe(204)
    const released = await download()
    expect(at(released, "error")).toBeNull()
    expect(["queued", "processing"]).toContain(at(released, "status"))
    const unblockAgain = await step("unblock")
    expect(unblockAgain.status).toBe(409)
    expect(at(await jsonOf(unblockAgain), "error.code")).toBe("cannot_unblock")
    expect((await step("fail", {})).status).toBe(204)
    expect(await download()).toMatchObject({
      status: "failed",
      error: { code: "download_failed", message: "Failed by the control API" }
    })
    const [failAgain, blockAgain, completeAgain] = [
      await step("fail", {}),
      await step("block", {}),
      await step("complete")
    ]
    expect([failAgain.status, blockAgain.status, completeAgain.status]).toEqual([409, 409, 409])
    expect(at(await jsonOf(failAgain), "error.code")).toBe("cannot_fail")
    expect(at(await jsonOf(blockAgain), "error.code")).toBe("cannot_block")
    expect(at(await jsonOf(completeAgain), "error.code")).toBe("cannot_advance")
  })

  it("accepts an OAuth token and answers a selection with 200", async () => {
    const r = await api(
      "/downloads",
      {
        method: "POST",
        body: JSON.stringify({ magnet: "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=Box%20select" })
      },
      emulator.accessToken
    )
    expect(r.status).toBe(200)
    const data = at(await jsonOf(r), "data")
    expect(at(data, "kind")).toBe("selection")
    const again = await api(`/download-selections/${String(at(data, "selection.id"))}`, {}, emulator.accessToken)
    expect(at(await jsonOf(again), "data.items")).toEqual(at(data, "selection.items"))
  })

  it("sends a signed download.completed webhook that verifies with the API key's whsec_ secret", async () => {
    const arrived = new Promise<void>((resolve) => {
      delivered = resolve
    })
    const created = await api("/downloads", {
      method: "POST",
      body: JSON.stringify({ url: "https://cdn.example.com/x.bin", webhook_url: receiverUrl })
    })
    const id = String(at(await jsonOf(created), "data.download.id"))
    await fetch(`${emulator.authUrl}/_control/downloads/${id}/complete`, { method: "POST" })
    await arrived
    const secretResponse = await fetch(
      `${emulator.authUrl}/_control/webhooks/secret?credential=apiKey:${emulator.state.primaryUser.id}`
    )
    const secret = String(at(await jsonOf(secretResponse), "data.secret"))
    const delivery = deliveries.at(-1)
    if (delivery === undefined) throw new Error("no delivery")
    const { headers, body } = delivery
    const expected = createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64"))
      .update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.`)
      .update(body)
      .digest("base64")
    expect(headers["webhook-signature"]).toBe(`v1,${expected}`)
    expect(headers.authorization).toBeUndefined()
    const payload = JSON.parse(body.toString())
    expect(payload).toMatchObject({
      id: headers["webhook-id"],
      type: "download.completed",
      data: { id, status: "completed" }
    })
  })

  it("refuses a plain-http webhook_url to a non-loopback host with 422", async () => {
    const r = await api("/downloads", {
      method: "POST",
      body: JSON.stringify({ url: "https://cdn.example.com/x.bin", webhook_url: "http://hooks.example.com/" })
    })
    expect(r.status).toBe(422)
    expect(at(await jsonOf(r), "error.details.fields.webhook_url")).toHaveLength(1)
  })

  it("uploads a .torrent as multipart/form-data", async () => {
    const form = new FormData()
    form.set(
      "file",
      new Blob([Buffer.from("d4:infod6:lengthi42e4:name5:a.isoee")], { type: "application/x-bittorrent" }),
      "a.torrent"
    )
    form.set("directory", "Uploads")
    const r = await fetch(`${emulator.baseUrl}/downloads/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${emulator.apiKey}` },
      body: form
    })
    expect(r.status).toBe(201)
    expect(at(await jsonOf(r), "data.download")).toMatchObject({ name: "a.iso", size_bytes: 42, directory: "Uploads" })
  })
})
