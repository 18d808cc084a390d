import { createHash } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import type { EmulatorClock } from "../../src/emulator/clock.ts"
import type { DownloadHost } from "../../src/emulator/downloadLifecycle.ts"
import { Downloads } from "../../src/emulator/downloads.ts"
import { type PlannedFile, parseMagnet, planSource } from "../../src/emulator/downloadsSources.ts"
import { parseMultipart, parseTorrent } from "../../src/emulator/downloadsUpload.ts"
import type { Principal, RouteResult } from "../../src/emulator/http.ts"
import { type WebhookEventType, WebhookSender } from "../../src/emulator/webhooks.ts"

const HASH = "0123456789abcdef0123456789abcdef01234567"
const magnet = (name: string) => `magnet:?xt=urn:btih:${HASH}&dn=${encodeURIComponent(name)}`

const manualClock = (): EmulatorClock => {
  let ms = 1_800_000_000_000
  let last = 0
  return {
    nowMs: () => ms,
    tick: () => {
      last = Math.max(last + 1, ms * 1000)
      return last
    },
    advance: (d) => {
      ms += d
    }
  }
}

interface Added {
  readonly userId: string
  readonly directory: string
  readonly folder: string | null
  readonly downloadId: string
  readonly files: ReadonlyArray<PlannedFile>
}

const USER: Principal = { kind: "apiKey", userId: "usr_a" }
const OTHER: Principal = { kind: "apiKey", userId: "usr_b" }

const created: Array<Downloads> = []
afterEach(() => {
  for (const d of created.splice(0)) d.lifecycle.dispose()
})

const setup = (
  limits: {
    concurrent_downloads?: number | null
    concurrent_torrents?: number | null
    max_file_size_bytes?: number | null
  } = {},
  credits = 10
) => {
  const clock = manualClock()
  const added: Array<Added> = []
  const limitsWithDefaults = {
    concurrent_downloads: null,
    concurrent_torrents: null,
    max_file_size_bytes: null,
    ...limits
  }
  const account: { credits: number; daily: number | null; limits: typeof limitsWithDefaults } = {
    credits,
    daily: null,
    limits: limitsWithDefaults
  }
  const host: DownloadHost = {
    limits: () => account.limits,
    takeDailyDownload: () => {
      if (account.daily === null) return true
      if (account.daily <= 0) return false
      account.daily--
      return true
    },
    spendCredit: (_, amount) => {
      if (account.credits < amount) return false
      account.credits -= amount
      return true
    },
    addFiles: (userId, input) => {
      added.push({ userId, ...input })
      return `file_${added.length}`
    }
  }
  const webhooks = new WebhookSender({ now: clock.nowMs })
  const downloads = new Downloads({
    clock,
    host,
    webhooks,
    timings: { processingMs: 1000, downloadingMs: 4000, finalizingMs: 1000 },
    selectionLifetimeMs: 60_000
  })
  created.push(downloads)
  const advance = (ms: number) => {
    clock.advance(ms)
    downloads.lifecycle.tick()
  }
  return { clock, downloads, added, account, advance }
}

const json = (body: unknown, headers: IncomingHttpHeaders = {}) => ({
  headers: { "content-type": "application/json", ...headers },
  body: Buffer.from(JSON.stringify(body))
})

const view = (result: RouteResult) => {
  if (result.kind === "raw") throw new Error("unexpected raw result")
  return { status: result.status, body: result.kind === "json" ? result.body : undefined }
}

const rec = (value: unknown): Record<string, unknown> => {
  if (typeof value !== "object" || value === null) throw new Error(`not an object: ${String(value)}`)
  return Object.fromEntries(Object.entries(value))
}

const dataOf = (result: RouteResult) => rec(rec(view(result).body).data)

const idsOf = (page: Record<string, unknown>) => {
  if (!Array.isArray(page.data)) throw new Error("data is not an array")
  return page.data.map((d) => rec(d).id)
}

const createDownload = (downloads: Downloads, body: unknown, principal: Principal = USER) => {
  const result = downloads.create(principal, json(body))
  expect(view(result).status).toBe(201)
  const data = dataOf(result)
  expect(data.kind).toBe("download")
  return rec(data.download)
}

const status = (downloads: Downloads, id: unknown) => dataOf(downloads.get(USER, String(id))).status

const createSelection = (downloads: Downloads, body: unknown) => {
  const result = downloads.create(USER, json(body))
  expect(view(result).status).toBe(200)
  const data = dataOf(result)
  expect(data.kind).toBe("selection")
  return rec(data.selection)
}

const items = (selection: Record<string, unknown>) => {
  const list = selection.items
  if (!Array.isArray(list)) throw new Error("items is not an array")
  return list.map(rec)
}

describe("download lifecycle", () => {
  it("advances queued → processing → downloading → finalizing → completed by time, adding files under directory", () => {
    const { downloads, added, advance } = setup()
    const d = createDownload(downloads, {
      url: "https://files.example.com/a/Movie%20One.mkv",
      directory: "Movies//2024/"
    })
    expect(d).toMatchObject({ attempt: 1, status: "processing", can_cancel: true, can_retry: false, file_id: null })
    expect(d.name).toBe("Movie One.mkv")
    expect(d.directory).toBe("Movies/2024")
    advance(999)
    expect(status(downloads, d.id)).toBe("processing")
    advance(1)
    expect(status(downloads, d.id)).toBe("downloading")
    advance(2000)
    expect(dataOf(downloads.get(USER, String(d.id))).progress).toBe(0.5)
    advance(2000)
    expect(status(downloads, d.id)).toBe("finalizing")
    expect(added).toEqual([])
    advance(1000)
    const done = dataOf(downloads.get(USER, String(d.id)))
    expect(done).toMatchObject({
      status: "completed",
      can_cancel: false,
      can_retry: false,
      file_id: "file_1",
      activity: null
    })
    expect(added).toEqual([
      {
        userId: "usr_a",
        directory: "Movies/2024",
        folder: null,
        downloadId: d.id,
        files: [{ path: "Movie One.mkv", sizeBytes: d.size_bytes }]
      }
    ])
  })

  it("completes a torrent into a folder named after it, then shows activity seeding", () => {
    const { downloads, added, advance } = setup()
    const d = createDownload(downloads, { magnet: magnet("Show S01"), client_reference: "ref-1" })
    expect(d).toMatchObject({ type: "torrent", client_reference: "ref-1" })
    advance(6000)
    expect(dataOf(downloads.get(USER, String(d.id)))).toMatchObject({ status: "completed", activity: "seeding" })
    expect(added[0]?.folder).toBe("Show S01")
    expect(added[0]?.files.map((f) => f.path)).toEqual([
      "Show S01.mkv",
      "Subs/Show S01.en.srt",
      "Extras/Show S01.sample.mkv"
    ])
  })

  it("makes a torrent's sample a tenth of its video, with or without xl, so an app never takes it for the episode", () => {
    for (let i = 0; i < 200; i++) {
      const hash = createHash("sha1").update(String(i)).digest("hex")
      for (const xl of ["", "&xl=97000000"]) {
        const parsed = parseMagnet(`magnet:?xt=urn:btih:${hash}&dn=Show.S01E0${i % 10}${xl}`)
        if ("problem" in parsed) throw new Error(parsed.problem)
        const plan = planSource({ type: "magnet", magnet: "", ...parsed }, [])
        if (plan?.kind !== "fetch") throw new Error("a magnet without stages is fetched")
        const size = (path: string) => plan.files.find((f) => f.path === path)?.sizeBytes ?? Number.NaN
        const video = size(`${parsed.name}.mkv`)
        expect(size(`Extras/${parsed.name}.sample.mkv`)).toBe(Math.max(1, Math.floor(video / 10)))
      }
    }
  })

  it("keeps downloads beyond concurrent_downloads queued and starts the oldest when a slot frees", () => {
    const { downloads, advance } = setup({ concurrent_downloads: 2 })
    const a = createDownload(downloads, { url: "https://x.example.com/a.bin" })
    const b = createDownload(downloads, { url: "https://x.example.com/b.bin" })
    const c = createDownload(downloads, { url: "https://x.example.com/c.bin" })
    const e = createDownload(downloads, { url: "https://x.example.com/e.bin" })
    expect([a.status, b.status, c.status, e.status]).toEqual(["processing", "processing", "queued", "queued"])
    expect(c.can_cancel).toBe(true)
    advance(6000)
    expect([status(downloads, a.id), status(downloads, c.id), status(downloads, e.id)]).toEqual([
      "completed",
      "processing",
      "processing"
    ])
  })

  it("applies concurrent_torrents to torrents only, and both caps together", () => {
    const { downloads, advance } = setup({ concurrent_downloads: 3, concurrent_torrents: 1 })
    const t1 = createDownload(downloads, { magnet: magnet("one") })
    const t2 = createDownload(downloads, { magnet: magnet("two") })
    const u1 = createDownload(downloads, { url: "https://x.example.com/u1.bin" })
    const u2 = createDownload(downloads, { url: "https://x.example.com/u2.bin" })
    const u3 = createDownload(downloads, { url: "https://x.example.com/u3.bin" })
    expect([t1.status, t2.status, u1.status, u2.status, u3.status]).toEqual([
      "processing",
      "queued",
      "processing",
      "processing",
      "queued"
    ])
    expect(downloads.lifecycle.advance(String(t2.id))).toBe(false)
    advance(6000)
    // all three active ones completed; the queued torrent and the queued URL start together
    expect([status(downloads, t2.id), status(downloads, u3.id)]).toEqual(["processing", "processing"])
  })

  it("fails a source whose name contains 'fail'; retry keeps the id, increments attempt and costs a credit", () => {
    const { downloads, advance, account } = setup()
    const d = createDownload(downloads, { url: "https://x.example.com/will-fail.mkv" })
    advance(5000)
    const failed = dataOf(downloads.get(USER, String(d.id)))
    expect(failed).toMatchObject({ status: "failed", can_cancel: false, can_retry: true })
    expect(rec(failed.error).code).toBe("source_unavailable")
    const retried = dataOf(downloads.retry(USER, String(d.id)))
    expect(retried).toMatchObject({ id: d.id, attempt: 2, error: null, status: "processing" })
    expect(account.credits).toBe(9)
    expect(view(downloads.retry(USER, String(d.id))).status).toBe(409)
  })

  it("refuses a retry without credit with 402 and leaves the download as it was", () => {
    const { downloads } = setup({}, 0)
    const d = createDownload(downloads, { url: "https://x.example.com/x.bin" })
    downloads.cancel(USER, String(d.id))
    const r = view(downloads.retry(USER, String(d.id)))
    expect(r.status).toBe(402)
    expect(dataOf(downloads.get(USER, String(d.id)))).toMatchObject({ status: "canceled", attempt: 1 })
  })

  it("counts new downloads against daily_downloads and answers 402 when none remain", () => {
    const { downloads, account } = setup()
    account.daily = 1
    createDownload(downloads, { url: "https://x.example.com/a.bin" })
    const r = view(downloads.create(USER, json({ url: "https://x.example.com/b.bin" })))
    expect(r.status).toBe(402)
    expect(r.body).toMatchObject({ error: { code: "daily_limit_reached" } })
  })

  it("fails with file_too_large past max_file_size_bytes", () => {
    const { downloads, advance } = setup({ max_file_size_bytes: 1000 })
    const d = createDownload(downloads, { url: "https://x.example.com/big.iso" })
    advance(1000)
    expect(rec(dataOf(downloads.get(USER, String(d.id))).error).code).toBe("file_too_large")
  })

  it("cancels only while can_cancel; cancel keeps the record, delete removes it", () => {
    const { downloads, advance } = setup()
    const d = createDownload(downloads, { url: "https://x.example.com/x.bin" })
    const canceled = dataOf(downloads.cancel(USER, String(d.id)))
    expect(canceled).toMatchObject({ status: "canceled", can_cancel: false, can_retry: true })
    const again = view(downloads.cancel(USER, String(d.id)))
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: { code: "download_not_cancelable" } })
    advance(10_000)
    expect(status(downloads, d.id)).toBe("canceled")
    expect(downloads.remove(USER, String(d.id))).toEqual({ kind: "empty", status: 204 })
    expect(view(downloads.get(USER, String(d.id))).status).toBe(404)
  })

  it("moves by the control API: advance one state, complete, fail", () => {
    const { downloads } = setup()
    const a = createDownload(downloads, { url: "https://x.example.com/a.bin" })
    expect(downloads.lifecycle.advance(String(a.id))).toBe(true)
    expect(status(downloads, a.id)).toBe("downloading")
    expect(downloads.lifecycle.complete(String(a.id))).toBe(true)
    expect(status(downloads, a.id)).toBe("completed")
    expect(downloads.lifecycle.advance(String(a.id))).toBe(false)
    const b = createDownload(downloads, { url: "https://x.example.com/b.bin" })
    expect(downloads.lifecycle.fail(String(b.id), "disk on fire")).toBe(true)
    expect(dataOf(downloads.get(USER, String(b.id))).error).toEqual({
      code: "download_failed",
      message: "disk on fire"
    })
  })

  it("blocks a download for account attention (not active, cancelable) and releases it to the queue", () => {
    const { downloads, advance } = setup({ concurrent_downloads: 1 })
    const a = createDownload(downloads, { url: "https://x.example.com/a.bin" })
    const b = createDownload(downloads, { url: "https://x.example.com/b.bin" })
    expect(downloads.lifecycle.block(String(a.id), "verify your email")).toBe(true)
    const blocked = dataOf(downloads.get(USER, String(a.id)))
    expect(blocked).toMatchObject({ status: "blocked", can_cancel: true, can_retry: false })
    expect(rec(blocked.error).message).toBe("verify your email")
    // the slot it held goes to the next queued download
    expect(status(downloads, b.id)).toBe("processing")
    advance(10_000)
    expect(status(downloads, a.id)).toBe("blocked")
    expect(downloads.lifecycle.unblock(String(a.id))).toBe(true)
    expect(status(downloads, a.id)).toBe("processing")
    expect(downloads.lifecycle.unblock(String(a.id))).toBe(false)
  })

  it("hides other users' downloads (404)", () => {
    const { downloads } = setup()
    const d = createDownload(downloads, { url: "https://x.example.com/a.bin" })
    expect(view(downloads.get(OTHER, String(d.id))).status).toBe(404)
    expect(view(downloads.cancel(OTHER, String(d.id))).status).toBe(404)
    expect(view(downloads.remove(OTHER, String(d.id))).status).toBe(404)
    expect(rec(view(downloads.list(OTHER, new URLSearchParams())).body).data).toEqual([])
  })
})

describe("download webhooks", () => {
  class CapturingSender extends WebhookSender {
    readonly events: Array<{ url: string; credential: string; id: string; type: string; data: unknown }> = []
    override enqueue(
      url: string,
      credential: string,
      event: { readonly id: string; readonly type: WebhookEventType; readonly data: unknown }
    ): void {
      this.events.push({ url, credential, ...event })
    }
  }

  it("emits one event per terminal transition of each attempt, signed for the creating credential", () => {
    const clock = manualClock()
    const webhooks = new CapturingSender({ now: clock.nowMs })
    const downloads = new Downloads({
      clock,
      webhooks,
      host: {
        limits: () => ({ concurrent_downloads: null, concurrent_torrents: null, max_file_size_bytes: null }),
        takeDailyDownload: () => true,
        spendCredit: () => true,
        addFiles: () => "file_1"
      }
    })
    created.push(downloads)
    const oauthUser: Principal = { kind: "oauth", userId: "usr_a", clientId: "app_1", scopes: new Set() }
    const hook = "https://hooks.example.com/dl"
    const d = createDownload(downloads, { url: "https://x.example.com/a.bin", webhook_url: hook }, oauthUser)
    downloads.cancel(oauthUser, String(d.id))
    downloads.retry(oauthUser, String(d.id))
    downloads.lifecycle.fail(String(d.id), "boom")
    downloads.retry(oauthUser, String(d.id))
    downloads.lifecycle.complete(String(d.id))
    createDownload(downloads, { url: "https://x.example.com/quiet.bin" }, oauthUser)
    expect(webhooks.events.map((e) => e.type)).toEqual(["download.canceled", "download.failed", "download.completed"])
    expect(webhooks.events.map((e) => rec(e.data).attempt)).toEqual([1, 2, 3])
    expect(new Set(webhooks.events.map((e) => e.id)).size).toBe(3)
    expect(webhooks.events.every((e) => e.url === hook && e.credential === "oauth:app_1")).toBe(true)
    expect(rec(webhooks.events[2]?.data)).toMatchObject({ id: d.id, status: "completed", file_id: "file_1" })
  })
})

describe("download creation validation", () => {
  it.each([
    ["neither url nor magnet", {}, "url"],
    ["both url and magnet", { url: "https://x.example.com/a", magnet: magnet("a") }, "url"],
    ["a relative url", { url: "/a.bin" }, "url"],
    ["an ftp url", { url: "ftp://x.example.com/a.bin" }, "url"],
    ["a magnet without info hash", { magnet: "magnet:?dn=x" }, "magnet"],
    [
      "a plain-http webhook_url",
      { url: "https://x.example.com/a", webhook_url: "http://hooks.example.com/" },
      "webhook_url"
    ],
    ["a private webhook host", { url: "https://x.example.com/a", webhook_url: "https://192.168.1.5/h" }, "webhook_url"],
    ["a loopback webhook host", { url: "https://x.example.com/a", webhook_url: "https://127.0.0.1/h" }, "webhook_url"],
    ["a '..' directory", { url: "https://x.example.com/a", directory: "a/../b" }, "directory"],
    ["an empty client_reference", { url: "https://x.example.com/a", client_reference: "" }, "client_reference"]
  ])("refuses %s with 422 naming the field", (_, body, field) => {
    const { downloads } = setup()
    const r = view(downloads.create(USER, json(body)))
    expect(r.status).toBe(422)
    expect(rec(rec(rec(r.body).error).details).fields).toHaveProperty(field)
  })

  it("takes only application/json (415) that parses (400)", () => {
    const { downloads } = setup()
    expect(view(downloads.create(USER, { headers: {}, body: Buffer.from("{}") })).status).toBe(415)
    const broken = { headers: { "content-type": "application/json" }, body: Buffer.from("{") }
    expect(view(downloads.create(USER, broken)).status).toBe(400)
  })
})

describe("GET /downloads", () => {
  it("pages newest first with opaque cursors and filters by client_reference", () => {
    const { downloads } = setup()
    const ids: Array<unknown> = []
    for (let i = 0; i < 5; i++) {
      ids.push(
        createDownload(downloads, { url: `https://x.example.com/${i}.bin`, client_reference: i % 2 ? "odd" : "even" })
          .id
      )
    }
    const page1 = rec(view(downloads.list(USER, new URLSearchParams({ limit: "2" }))).body)
    expect(idsOf(page1)).toEqual([ids[4], ids[3]])
    const meta1 = rec(page1.meta)
    expect(meta1.has_more).toBe(true)
    const page2 = rec(
      view(downloads.list(USER, new URLSearchParams({ limit: "2", cursor: String(meta1.next_cursor) }))).body
    )
    expect(idsOf(page2)).toEqual([ids[2], ids[1]])
    const page3 = rec(
      view(downloads.list(USER, new URLSearchParams({ limit: "2", cursor: String(rec(page2.meta).next_cursor) }))).body
    )
    expect(page3.meta).toEqual({ next_cursor: null, has_more: false })
    const odd = rec(view(downloads.list(USER, new URLSearchParams({ client_reference: "odd" }))).body)
    expect(idsOf(odd)).toEqual([ids[3], ids[1]])
  })

  it("answers 422 for an altered cursor or an out-of-range limit", () => {
    const { downloads } = setup()
    for (let i = 0; i < 3; i++) createDownload(downloads, { url: `https://x.example.com/${i}.bin` })
    const meta = rec(rec(view(downloads.list(USER, new URLSearchParams({ limit: "1" }))).body).meta)
    const cursor = String(meta.next_cursor)
    const altered = `${cursor.slice(0, -2)}${cursor.endsWith("AA") ? "BB" : "AA"}`
    expect(view(downloads.list(USER, new URLSearchParams({ cursor: altered }))).status).toBe(422)
    expect(view(downloads.list(OTHER, new URLSearchParams({ cursor }))).status).toBe(422)
    expect(view(downloads.list(USER, new URLSearchParams({ limit: "0" }))).status).toBe(422)
    expect(view(downloads.list(USER, new URLSearchParams({ limit: "101" }))).status).toBe(422)
  })
})

describe("download selections", () => {
  it("asks which file of a 'select' magnet to fetch, then creates a download of that file", () => {
    const { downloads, added, advance } = setup()
    const selection = createSelection(downloads, { magnet: magnet("Pack select"), directory: "Pack" })
    expect(selection.stage).toBe(1)
    const list = items(selection)
    expect(list[0]).toEqual({ item_id: "root", parent_id: null, selectable: false, name: "Pack select" })
    expect(list.slice(1).every((i) => i.parent_id === "root" && i.selectable === true)).toBe(true)
    expect(dataOf(downloads.getSelection(USER, String(selection.id)))).toEqual(selection)
    const notSelectable = view(downloads.choose(USER, String(selection.id), json({ item_id: "root" })))
    expect(notSelectable.status).toBe(422)
    const chosen = downloads.choose(USER, String(selection.id), json({ item_id: "f1" }))
    expect(view(chosen).status).toBe(201)
    const d = rec(dataOf(chosen).download)
    advance(6000)
    expect(status(downloads, d.id)).toBe("completed")
    expect(added[0]?.files.map((f) => f.path)).toEqual(["Pack select.mkv"])
    expect(added[0]?.directory).toBe("Pack")
    const twice = view(downloads.choose(USER, String(selection.id), json({ item_id: "f2" })))
    expect(twice.status).toBe(409)
  })

  it("runs a two-stage source: each later stage has a new selection id and new items", () => {
    const { downloads } = setup()
    const first = createSelection(downloads, { magnet: magnet("Film stages") })
    expect(items(first).map((i) => i.item_id)).toEqual(["q-2160p", "q-1080p"])
    const next = downloads.choose(USER, String(first.id), json({ item_id: "q-1080p" }))
    expect(view(next).status).toBe(200)
    const second = rec(dataOf(next).selection)
    expect(second.id).not.toBe(first.id)
    expect(second.stage).toBe(2)
    expect(items(second)[1]?.name).toBe("Film stages.1080p.mkv")
    const done = downloads.choose(USER, String(second.id), json({ item_id: "f1" }))
    expect(view(done).status).toBe(201)
    expect(rec(dataOf(done).download).name).toBe("Film stages")
  })

  it("offers variants for a URL on a multi. host", () => {
    const { downloads } = setup()
    const selection = createSelection(downloads, { url: "https://multi.example.com/watch/clip.mp4" })
    expect(items(selection).map((i) => i.name)).toEqual(["clip.1080p.mp4", "clip.720p.mp4", "clip.480p.mp4"])
    const d = downloads.choose(USER, String(selection.id), json({ item_id: "v-720p" }))
    expect(rec(dataOf(d).download).name).toBe("clip.720p.mp4")
  })

  it("refuses a choice after expires_at (409), an unknown item (422) and another user's selection (404)", () => {
    const { downloads, clock } = setup()
    const selection = createSelection(downloads, { magnet: magnet("x select") })
    expect(new Date(String(selection.expires_at)).getTime()).toBe(clock.nowMs() + 60_000)
    expect(view(downloads.choose(USER, String(selection.id), json({ item_id: "nope" }))).status).toBe(422)
    expect(view(downloads.choose(USER, String(selection.id), json({}))).status).toBe(422)
    expect(view(downloads.getSelection(OTHER, String(selection.id))).status).toBe(404)
    expect(view(downloads.choose(OTHER, String(selection.id), json({ item_id: "f1" }))).status).toBe(404)
    clock.advance(60_000)
    const late = view(downloads.choose(USER, String(selection.id), json({ item_id: "f1" })))
    expect(late.status).toBe(409)
    expect(late.body).toMatchObject({ error: { code: "selection_expired" } })
  })
})

describe("POST /downloads/upload", () => {
  const multipart = (
    parts: ReadonlyArray<{ name: string; fileName?: string; type?: string; data: Buffer | string }>
  ) => {
    const boundary = "----dlsync-test-boundary"
    const chunks: Array<Buffer> = []
    for (const p of parts) {
      const disposition = `form-data; name="${p.name}"${p.fileName === undefined ? "" : `; filename="${p.fileName}"`}`
      const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ""}\r\n`
      chunks.push(Buffer.from(head), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from("\r\n"))
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`))
    return { headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(chunks) }
  }
  const torrent = Buffer.from(
    "d8:announce3:x:y4:infod5:filesld6:lengthi1000e4:pathl5:a.mkveed6:lengthi20e4:pathl4:Subs5:a.srteee4:name4:Showee"
  )

  it("reads a torrent's name and files (BEP 3) and the info hash over the info dictionary", () => {
    const parsed = parseTorrent(torrent)
    expect(parsed).toMatchObject({
      name: "Show",
      files: [
        { path: "a.mkv", sizeBytes: 1000 },
        { path: "Subs/a.srt", sizeBytes: 20 }
      ]
    })
    expect(typeof parsed !== "string" && parsed.infoHash).toMatch(/^[0-9a-f]{40}$/)
    expect(parseTorrent(Buffer.from("d4:infod4:name1:xee"))).toMatch(/neither length nor files/)
    expect(parseTorrent(Buffer.from("d4:info"))).toMatch(/not valid bencode/)
  })

  it("creates a download from an uploaded .torrent with the text fields", () => {
    const { downloads, added, advance } = setup()
    const r = downloads.upload(
      USER,
      multipart([
        { name: "client_reference", data: "up-1" },
        { name: "directory", data: "Uploads" },
        { name: "file", fileName: "show.torrent", type: "application/x-bittorrent", data: torrent }
      ])
    )
    expect(view(r).status).toBe(201)
    const d = rec(dataOf(r).download)
    expect(d).toMatchObject({
      name: "Show",
      type: "torrent",
      client_reference: "up-1",
      directory: "Uploads",
      size_bytes: 1020
    })
    advance(6000)
    expect(added[0]).toMatchObject({ folder: "Show", directory: "Uploads" })
  })

  it("creates a usenet download from an .nzb", () => {
    const { downloads } = setup()
    const nzb = `<?xml version="1.0"?><nzb xmlns="http://www.newzbin.com/DTD/2003/nzb"><file subject="Film [1/2] - &quot;film.mkv&quot; yEnc"></file></nzb>`
    const r = downloads.upload(USER, multipart([{ name: "file", fileName: "film.nzb", data: nzb }]))
    expect(view(r).status).toBe(201)
    expect(rec(dataOf(r).download)).toMatchObject({ type: "usenet", name: "film" })
  })

  it("refuses other file types (415), a missing file part or malformed torrent (422), non-multipart (415)", () => {
    const { downloads } = setup()
    expect(view(downloads.upload(USER, multipart([{ name: "file", fileName: "notes.txt", data: "hi" }]))).status).toBe(
      415
    )
    expect(view(downloads.upload(USER, multipart([{ name: "directory", data: "x" }]))).status).toBe(422)
    const bad = multipart([{ name: "file", fileName: "x.torrent", data: "garbage" }])
    expect(view(downloads.upload(USER, bad)).status).toBe(422)
    expect(view(downloads.upload(USER, json({}))).status).toBe(415)
  })

  it("parses multipart bodies strictly", () => {
    expect(parseMultipart("multipart/form-data", Buffer.alloc(0))).toMatch(/boundary/)
    expect(parseMultipart("multipart/form-data; boundary=b", Buffer.from("--b\r\nX: y\r\n\r\nno end"))).toMatch(
      /not terminated/
    )
  })
})
