/**
 * The exact HTTP sequence Sonarr makes against a qBittorrent client (Sonarr 49df353,
 * QBittorrentProxyV2.cs and QBittorrent.cs; docs/arr-download-client-surface.md §3),
 * replayed with raw fetch, each answer read as Sonarr reads it:
 *   test ─► add (magnet over 1024 bytes: multipart; .torrent upload) ─► post-add calls
 *        ─► poll (status mapping, remaining, output path) ─► import ─► setCategory ─► delete
 * and Radarr's and Sonarr's other ways in (Basic on every request; Bearer API key).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { makeTorrent } from "../support/torrentFixture.ts"
import { PASSWORD, startQbit, USERNAME } from "./harness.ts"

const CATEGORY = "tv-sonarr"
const IMPORTED = "tv-imported"
/** Where Sonarr (in its container) sees the mirror root. */
const APP_ROOT = "/data/downloads"

describe("Sonarr's sequence, replayed", () => {
  it.effect("test → add → poll → import → remove, with a path map", () =>
    Effect.gen(function* () {
      const { url, root, control } = yield* startQbit({ pathMap: (local) => [[local, APP_ROOT]] })
      const sonarr = new SonarrProxy(url)

      // --- Test (QBittorrent.Test): probe, login, version, preferences, categories, list.
      const probe = yield* sonarr.raw("GET", "app/webapiVersion")
      assert.include([200, 403], probe.status, "the unauthenticated probe: 200 or 403, never 404 or 401")
      const version = parseDotNetVersion(yield* sonarr.get("app/webapiVersion"))
      assert.isTrue(atLeast(version, [2, 11, 0]), "Sonarr sends `stopped` and reads stoppedXX from 2.11.0")
      assert.isTrue(atLeast(version, [2, 6, 1]), "content_path is trusted from 2.6.1")
      const prefs = JSON.parse(yield* sonarr.get("app/preferences"))
      assert.isFalse(removesAtLimit(prefs), "Sonarr refuses a client that removes torrents at its ratio limit")
      assert.strictEqual(prefs.save_path, APP_ROOT)
      assert.isTrue(prefs.dht)
      const before = JSON.parse(yield* sonarr.get("torrents/categories"))
      assert.notProperty(before, CATEGORY)
      yield* sonarr.post("torrents/createCategory", { category: CATEGORY })
      yield* sonarr.post("torrents/createCategory", { category: IMPORTED })
      const categories = JSON.parse(yield* sonarr.get("torrents/categories"))
      assert.deepStrictEqual(categories[CATEGORY], { name: CATEGORY, savePath: `${APP_ROOT}/${CATEGORY}` })
      assert.deepStrictEqual(JSON.parse(yield* sonarr.get(`torrents/info?category=${CATEGORY}`)), [])

      // --- Add a magnet (the DHT check first; long magnets go multipart), then a .torrent upload.
      assert.isTrue(JSON.parse(yield* sonarr.get("app/preferences")).dht)
      const magnetHash = "C12FE1C06BBA254A9DC9F519B335AA7C1367A88A"
      const trackers = Array.from({ length: 30 }, (_, i) => `&tr=udp%3A%2F%2Ftracker${i}.example.org%3A1337%2Fannounce`)
      const magnet = `magnet:?xt=urn:btih:${magnetHash}&dn=Show.S01E01.1080p.WEB.h264${trackers.join("")}`
      assert.isAbove(magnet.length, 1024)
      yield* sonarr.get("app/webapiVersion")
      const added = yield* sonarr.post(
        "torrents/add",
        { urls: magnet, category: CATEGORY, stopped: "False", ratioLimit: "1.5", seedingTimeLimit: "60" },
        { multipart: true }
      )
      assert.notStrictEqual(added, "Fails.")
      // WaitForTorrent: the first probe already finds it (Sonarr lowercases the hash).
      const properties = yield* sonarr.raw("GET", `torrents/properties?hash=${magnetHash.toLowerCase()}`)
      assert.strictEqual(properties.status, 200)
      assert.strictEqual(JSON.parse(properties.body).save_path, `${APP_ROOT}/${CATEGORY}`)
      const lower = magnetHash.toLowerCase()
      yield* sonarr.post("torrents/setShareLimits", { hashes: lower, ratioLimit: "1.5", seedingTimeLimit: "60" })
      yield* sonarr.post("torrents/topPrio", { hashes: lower })
      yield* sonarr.post("torrents/setForceStart", { hashes: lower, value: "true" })
      yield* sonarr.post("torrents/addTags", { hashes: lower, tags: "sonarr,anime" })

      const torrent = makeTorrent("Show.S01E02.1080p.WEB.h264", [
        { path: ["Show.S01E02.1080p.WEB.h264.mkv"], size: 50_000 },
        { path: ["Sample", "sample.mkv"], size: 500 }
      ])
      const uploaded = yield* sonarr.upload("Show.S01E02.1080p.WEB.h264.torrent", torrent.content, {
        category: CATEGORY,
        stopped: "False"
      })
      assert.notStrictEqual(uploaded, "Fails.")
      assert.strictEqual(
        (yield* sonarr.raw("GET", `torrents/properties?hash=${torrent.hash}`)).status,
        200,
        "the uploaded torrent is there as soon as add returns"
      )

      // --- Poll (GetItems): each item read as Sonarr reads it.
      const magnetId = IntakeId.make(`btih:${lower}`)
      const fileId = IntakeId.make(`btih:${torrent.hash}`)
      let items = yield* sonarr.poll()
      assert.deepStrictEqual(items.map((i) => i.downloadId).sort(), [magnetHash, torrent.hash.toUpperCase()].sort())
      assert.isTrue(items.every((i) => i.status === "Queued"))

      yield* control.set(fileId, { state: "downloading", progress: 0.25, remaining: 37_875, etaSeconds: 120 })
      yield* control.set(magnetId, { state: "mirroring", progress: 0.9, remaining: 100, etaSeconds: 3 })
      items = yield* sonarr.poll()
      const downloading = items.find((i) => i.downloadId === torrent.hash.toUpperCase())
      assert.strictEqual(downloading?.status, "Downloading")
      assert.strictEqual(downloading?.remainingSize, 37_875)
      assert.strictEqual(downloading?.remainingTime, 120)
      assert.strictEqual(downloading?.outputPath, undefined)
      assert.strictEqual(items.find((i) => i.downloadId === magnetHash)?.status, "Downloading")

      yield* control.set(magnetId, { state: "paused" })
      assert.strictEqual((yield* sonarr.poll()).find((i) => i.downloadId === magnetHash)?.status, "Paused")
      yield* control.fail(magnetId, "blocked by the service")
      assert.strictEqual((yield* sonarr.poll()).find((i) => i.downloadId === magnetHash)?.status, "Warning")

      yield* control.complete(fileId)
      items = yield* sonarr.poll()
      const done = items.find((i) => i.downloadId === torrent.hash.toUpperCase())
      assert.strictEqual(done?.status, "Completed")
      assert.strictEqual(done?.remainingSize, 0)
      assert.strictEqual(done?.outputPath, `${APP_ROOT}/${CATEGORY}/Show.S01E02.1080p.WEB.h264`)
      assert.isTrue(done?.canMoveFiles, "stopped with its seed limit met: Sonarr may move the files and remove it")

      // --- Import: the files are where content_path says (through the mount), and Sonarr moves them.
      const onDisk = Path.join(root, done?.outputPath?.slice(APP_ROOT.length + 1) ?? "")
      assert.deepStrictEqual(Fs.readdirSync(onDisk).sort(), ["Sample", "Show.S01E02.1080p.WEB.h264.mkv"])
      assert.strictEqual(Fs.statSync(Path.join(onDisk, "Show.S01E02.1080p.WEB.h264.mkv")).size, 50_000)
      Fs.rmSync(onDisk, { recursive: true })

      // --- Post-import category, then removal (deleteFiles=true since it could move them).
      yield* sonarr.post("torrents/setCategory", { hashes: torrent.hash, category: IMPORTED })
      assert.notInclude(
        (yield* sonarr.poll()).map((i) => i.downloadId),
        torrent.hash.toUpperCase(),
        "the imported torrent leaves Sonarr's category"
      )
      yield* sonarr.post("torrents/delete", { hashes: torrent.hash, deleteFiles: "true" })
      yield* sonarr.post("torrents/delete", { hashes: lower })
      assert.deepStrictEqual(yield* control.removed, [
        { ids: [fileId], deleteFiles: true },
        { ids: [magnetId], deleteFiles: false }
      ])
      assert.deepStrictEqual(JSON.parse(yield* sonarr.get("torrents/info")), [])
    }).pipe(Effect.scoped)
  )

  it.effect("Radarr: Basic credentials on every request, no login needed; Sonarr's API-key mode: Bearer", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const basic = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`
      const version = yield* fetchText(url, "app/webapiVersion", { authorization: basic })
      assert.strictEqual(version.status, 200)
      parseDotNetVersion(version.body)
      const bearer = yield* fetchText(url, "torrents/info", { authorization: `Bearer ${PASSWORD}` })
      assert.deepStrictEqual([bearer.status, bearer.body], [200, "[]"])
      const wrong = yield* fetchText(url, "torrents/info", { authorization: `Bearer nope` })
      assert.strictEqual(wrong.status, 403)
    }).pipe(Effect.scoped)
  )

  it.effect(
    "a wrong password: Fails. and no cookie; five different ones ban the address, even the right password",
    () =>
      Effect.gen(function* () {
        const { url } = yield* startQbit()
        const login = (password: string) =>
          Effect.promise(async () => {
            const response = await fetch(`${url}/api/v2/auth/login`, {
              method: "POST",
              body: new URLSearchParams({ username: USERNAME, password })
            })
            return { status: response.status, body: await response.text(), cookie: response.headers.get("set-cookie") }
          })
        for (let attempt = 1; attempt <= 5; attempt++) {
          const refused = yield* login(`wrong ${attempt}`)
          assert.deepStrictEqual([refused.status, refused.body, refused.cookie], [200, "Fails.", null])
        }
        const banned = yield* login(PASSWORD)
        assert.strictEqual(banned.status, 403)
        assert.include(banned.body, "banned")
        const basic = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`
        assert.strictEqual((yield* fetchText(url, "torrents/info", { authorization: basic })).status, 403)
        yield* TestClock.adjust("59 minutes")
        assert.strictEqual((yield* login(PASSWORD)).status, 403, "still banned")
        yield* TestClock.adjust("2 minutes")
        const after = yield* login(PASSWORD)
        assert.deepStrictEqual([after.status, after.body], [200, "Ok."], "the ban ends after an hour")
      }).pipe(Effect.scoped)
  )

  it.effect("a session unused for an hour ends (Sonarr signs in again on the 403); logout ends it at once", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const sonarr = new SonarrProxy(url)
      assert.strictEqual(yield* sonarr.get("app/webapiVersion"), "2.11.2")
      yield* TestClock.adjust("50 minutes")
      assert.strictEqual((yield* sonarr.raw("GET", "app/webapiVersion")).status, 200, "in use: still alive")
      yield* TestClock.adjust("61 minutes")
      assert.strictEqual((yield* sonarr.raw("GET", "app/webapiVersion")).status, 403, "expired")
      assert.strictEqual(yield* sonarr.get("app/webapiVersion"), "2.11.2", "one sign-in and a retry")
      yield* sonarr.post("auth/logout", {})
      assert.strictEqual((yield* sonarr.raw("GET", "app/webapiVersion")).status, 403)
    }).pipe(Effect.scoped)
  )
})

// ---------------------------------------------------------------------------------------

interface SonarrItem {
  readonly downloadId: string
  readonly status: string
  readonly remainingSize: number
  readonly remainingTime: number | undefined
  readonly outputPath: string | undefined
  readonly canMoveFiles: boolean
}

/** QBittorrentProxyV2's requests and QBittorrent.GetItems' reading, over fetch. */
class SonarrProxy {
  private cookie: string | undefined
  private readonly url: string
  constructor(url: string) {
    this.url = url
  }

  raw(method: string, path: string, body?: URLSearchParams | FormData) {
    return Effect.promise(async () => {
      const response = await fetch(`${this.url}/api/v2/${path}`, {
        method,
        ...(body === undefined ? {} : { body }),
        headers: this.cookie === undefined ? {} : { cookie: this.cookie }
      })
      return { status: response.status, body: await response.text() }
    })
  }

  /** ProcessRequest: a 403 → one login and a retry; any other non-2xx is an error. */
  private request(method: string, path: string, body?: () => URLSearchParams | FormData) {
    return Effect.gen({ self: this }, function* () {
      if (this.cookie === undefined) yield* this.login()
      let response = yield* this.raw(method, path, body?.())
      if (response.status === 403) {
        yield* this.login()
        response = yield* this.raw(method, path, body?.())
      }
      if (response.status < 200 || response.status > 299) {
        return yield* Effect.die(new Error(`DownloadClientException: ${path} answered ${response.status}`))
      }
      return response.body
    })
  }

  private login() {
    return Effect.gen({ self: this }, function* () {
      const response = yield* Effect.promise(() =>
        fetch(`${this.url}/api/v2/auth/login`, {
          method: "POST",
          body: new URLSearchParams({ username: USERNAME, password: PASSWORD })
        })
      )
      const body = yield* Effect.promise(() => response.text())
      if (body !== "" && body !== "Ok.") return yield* Effect.die(new Error("authentication failed"))
      const setCookie = response.headers.get("set-cookie") ?? ""
      assert.match(setCookie, /^SID=[^;]+;/)
      this.cookie = setCookie.split(";")[0]
    })
  }

  get(path: string) {
    return this.request("GET", path)
  }

  /** HttpRequestBuilder: url-encoded, multipart when asked (a file, or a value over 1024 bytes). */
  post(path: string, fields: Record<string, string>, options: { multipart?: boolean } = {}) {
    return this.request("POST", path, () => {
      if (options.multipart !== true) return new URLSearchParams(fields)
      const form = new FormData()
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      return form
    })
  }

  upload(fileName: string, content: Uint8Array<ArrayBuffer>, fields: Record<string, string>) {
    return this.request("POST", "torrents/add", () => {
      const form = new FormData()
      form.append("torrents", new Blob([content], { type: "application/x-bittorrent" }), fileName)
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      return form
    })
  }

  /** RefreshMonitoredDownloads: webapiVersion, preferences, info?category, each torrent as GetItems maps it. */
  poll() {
    return Effect.gen({ self: this }, function* () {
      const version = parseDotNetVersion(yield* this.get("app/webapiVersion"))
      const prefs = JSON.parse(yield* this.get("app/preferences"))
      const torrents: ReadonlyArray<Record<string, unknown>> = JSON.parse(
        yield* this.get(`torrents/info?category=${CATEGORY}`)
      )
      return torrents.map((t): SonarrItem => sonarrItem(t, prefs, version))
    })
  }
}

const sonarrItem = (t: Record<string, unknown>, prefs: Record<string, unknown>, version: Version): SonarrItem => {
  // JsonConvert into QBittorrentTorrent: these must be JSON numbers (a null fails the whole poll).
  for (const field of [
    "size",
    "progress",
    "eta",
    "ratio",
    "ratio_limit",
    "seeding_time_limit",
    "inactive_seeding_time_limit",
    "last_activity",
    "seeding_time"
  ]) {
    assert.isTrue(Number.isFinite(t[field]), `${field} is a finite number, got ${JSON.stringify(t[field])}`)
  }
  const hash = String(t.hash)
  assert.match(hash, /^[0-9a-f]{40}$/, "hashes are lowercase v1 info-hashes")
  const state = String(t.state)
  const size = Number(t.size)
  let status: string
  if (state === "error" || state === "stalledDL" || state === "missingFiles") status = "Warning"
  else if (state === "stoppedDL" || state === "pausedDL") status = "Paused"
  else if (["queuedDL", "checkingDL", "checkingUP", "checkingResumeData", "metaDL", "forcedMetaDL"].includes(state)) {
    status = "Queued"
  } else if (["pausedUP", "stoppedUP", "uploading", "stalledUP", "queuedUP", "forcedUP"].includes(state)) {
    status = "Completed"
  } else status = "Downloading"
  const eta = Number(t.eta)
  let remainingTime = eta === 8_640_000 || eta < 0 || eta > 365 * 24 * 3600 ? undefined : eta
  let outputPath: string | undefined
  if (status === "Completed") {
    remainingTime = 0
    if (atLeast(version, [2, 6, 1])) {
      if (t.content_path !== t.save_path) outputPath = String(t.content_path)
      else status = "Warning"
    }
  }
  return {
    downloadId: hash.toUpperCase(),
    status,
    remainingSize: Math.trunc(size * (1 - Number(t.progress))),
    remainingTime,
    outputPath,
    canMoveFiles: (state === "pausedUP" || state === "stoppedUP") && hasReachedSeedLimit(t, prefs)
  }
}

/** QBittorrent.HasReachedSeedLimit, with the seeding time taken from info. */
const hasReachedSeedLimit = (t: Record<string, unknown>, prefs: Record<string, unknown>): boolean => {
  const ratio = Number(t.ratio)
  const ratioLimit = Number(t.ratio_limit)
  if (ratioLimit >= 0) {
    if (ratioLimit - ratio <= 0.001) return true
  } else if (ratioLimit === -2 && prefs.max_ratio_enabled === true) {
    if (Number(prefs.max_ratio) - ratio <= 0.001) return true
  }
  const seedingLimit = Number(t.seeding_time_limit)
  if (seedingLimit >= 0 && Number(t.seeding_time) >= seedingLimit * 60) return true
  const inactiveLimit = Number(t.inactive_seeding_time_limit)
  return inactiveLimit >= 0 && Date.now() / 1000 - Number(t.last_activity) > inactiveLimit * 60
}

/** QBittorrent.Test: an error when the global limits would remove torrents. */
const removesAtLimit = (prefs: Record<string, unknown>): boolean =>
  (prefs.max_ratio_enabled === true ||
    (prefs.max_seeding_time_enabled === true && Number(prefs.max_seeding_time) < 20160)) &&
  (prefs.max_ratio_act === 1 || prefs.max_ratio_act === 3)

type Version = ReadonlyArray<number>

/** .NET `Version.Parse`: 2 to 4 dot-separated non-negative integers, nothing else. */
const parseDotNetVersion = (text: string): Version => {
  assert.match(text, /^\d+\.\d+(\.\d+){0,2}$/, `Version.Parse(${JSON.stringify(text)})`)
  return text.split(".").map(Number)
}

const atLeast = (version: Version, wanted: Version): boolean => {
  for (let i = 0; i < wanted.length; i++) {
    const a = version[i] ?? 0
    const b = wanted[i] ?? 0
    if (a !== b) return a > b
  }
  return true
}

const fetchText = (url: string, path: string, headers: Record<string, string>) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/v2/${path}`, { headers })
    return { status: response.status, body: await response.text() }
  })
