/**
 * The SABnzbd surface driven by the exact HTTP sequence Sonarr makes for one release
 * (Sonarr/Sonarr src/NzbDrone.Core/Download/Clients/Sabnzbd/{SabnzbdProxy,Sabnzbd}.cs):
 * test → addfile → poll queue + history (+ get_config) → history Completed → import →
 * queue → history&name=delete, each answer read as Sonarr reads it (sonarrReads.ts).
 */
import * as Http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { addfile, get, KEY, NZB, sonarrUrl, withSurface } from "./harness.ts"
import {
  readAddResponse,
  readConfig,
  readHistory,
  readQueue,
  readVersion,
  SONARR_VERSION_REGEX,
  sonarrItems
} from "./sonarrReads.ts"

describe("SABnzbd surface: Sonarr's sequence for one release", () => {
  it.effect("test, add, poll, complete, import, remove: every answer as Sonarr parses it", () =>
    withSurface(({ base, memory, root }) =>
      Effect.gen(function* () {
        // Test: TestConnectionAndVersion, TestAuthentication, TestGlobalConfig, TestCategory.
        const version = readVersion((yield* get(sonarrUrl(base, "version"))).text)
        assert.match(version, SONARR_VERSION_REGEX)
        assert.isAtLeast(Number(version.split(".")[0]), 4)
        for (let i = 0; i < 3; i++) {
          const config = readConfig((yield* get(sonarrUrl(base, "get_config"))).text)
          assert.strictEqual(config.completeDir, root)
          assert.isFalse(config.preCheck)
          const tv = config.categories.find((c) => c.name === "tv")
          assert.deepStrictEqual(tv, { name: "tv", dir: "tv", fullPath: `${root}/tv` })
          assert.isFalse(config.sortingFor("tv"), "no sorter renames what the app imports")
          assert.isFalse(config.removesCompletedDownloads, "history is kept until the app removes an item")
        }

        // The app fetched the NZB itself; it uploads it.
        const added = readAddResponse((yield* addfile(base, "Show.S01E01.1080p", NZB, "tv")).text)
        assert.strictEqual(added.length, 1)
        const nzoId = added[0]!
        assert.match(nzoId, /^SABnzbd_nzo_[0-9a-f]{64}$/)
        const [first] = yield* memory.added
        assert.strictEqual(first?.source._tag, "NzbFile")
        assert.deepStrictEqual(first?.options, { category: "tv", paused: false, via: "sabnzbd" })
        const id = (yield* memory.items)[0]!.id

        // Poll (RefreshMonitoredDownloads): queue with the category, history limit 60, get_config.
        const poll = Effect.gen(function* () {
          const queue = readQueue((yield* get(sonarrUrl(base, "queue", { start: 0, limit: 0, category: "tv" }))).text)
          const history = readHistory(
            (yield* get(sonarrUrl(base, "history", { start: 0, limit: 60, category: "tv" }))).text
          )
          readConfig((yield* get(sonarrUrl(base, "get_config"))).text)
          return sonarrItems(queue, history, "tv")
        })

        const waiting = yield* poll
        assert.deepStrictEqual(
          waiting.map((i) => [i.downloadId, i.status, i.title]),
          [[nzoId, "Queued", "Show.S01E01.1080p"]]
        )

        yield* memory.progress(id, 0.25, 4 * 1024 * 1024 * 1024, 90_061)
        const downloading = (yield* poll)[0]!
        assert.strictEqual(downloading.status, "Downloading")
        assert.strictEqual(downloading.totalSize, 4 * 1024 * 1024 * 1024)
        assert.strictEqual(downloading.remainingSize, 3 * 1024 * 1024 * 1024)
        assert.strictEqual(downloading.remainingTime, "1.01:01:01", "D:HH:MM:SS read as a TimeSpan")

        yield* TestClock.setTime(5_000_000)
        yield* memory.complete(id)
        const [done] = yield* poll
        assert.strictEqual(done?.downloadId, nzoId, "the same nzo_id in queue and history")
        assert.strictEqual(done?.status, "Completed")
        assert.strictEqual(done?.outputPath, `${root}/tv/Show.S01E01.1080p`)
        assert.strictEqual(done?.totalSize, 4 * 1024 * 1024 * 1024)

        // Import done; RemoveItem: the queue first (not there), then history delete with del_files.
        const queue = readQueue((yield* get(sonarrUrl(base, "queue", { start: 0, limit: 0, category: "tv" }))).text)
        assert.isFalse(queue.items.some((i) => i.id === nzoId))
        const removed = yield* get(
          sonarrUrl(base, "history", { name: "delete", del_files: 1, value: nzoId, archive: 1 })
        )
        assert.strictEqual(removed.status, 200)
        assert.isTrue(JSON.parse(removed.text).status)
        assert.deepStrictEqual(yield* memory.removed, [{ ids: [id], deleteFiles: true }])
        assert.deepStrictEqual(yield* poll, [])
      })
    )
  )

  it.effect("a failed release is history Failed with the service's reason; categories filter both lists", () =>
    withSurface(({ base, memory }) =>
      Effect.gen(function* () {
        const tv = readAddResponse((yield* addfile(base, "Show.S01E02", NZB, "tv")).text)[0]!
        readAddResponse((yield* addfile(base, "Film.2024", NZB.replace("x@y", "z@y"), "movies")).text)
        const [tvItem, movie] = yield* memory.items
        yield* memory.fail(tvItem!.id, "blocked: the service refused this release")
        yield* memory.progress(movie!.id, 0.5, 1000, 5)

        const tvHistory = readHistory(
          (yield* get(sonarrUrl(base, "history", { start: 0, limit: 60, category: "tv" }))).text
        )
        assert.deepStrictEqual(
          tvHistory.items.map((i) => [i.id, i.status, i.failMessage, i.category]),
          [[tv, "Failed", "blocked: the service refused this release", "tv"]]
        )
        const tvQueue = readQueue((yield* get(sonarrUrl(base, "queue", { start: 0, limit: 0, category: "tv" }))).text)
        assert.deepStrictEqual(tvQueue.items, [])
        const movieQueue = readQueue(
          (yield* get(sonarrUrl(base, "queue", { start: 0, limit: 0, category: "movies" }))).text
        )
        assert.deepStrictEqual(
          movieQueue.items.map((i) => [i.status, i.category, i.timeleft, i.percentage]),
          [["Downloading", "movies", "0:00:05", 50]]
        )
        // A failed release removed by the app: archive=0, no files.
        yield* get(sonarrUrl(base, "history", { name: "delete", del_files: 0, value: tv, archive: 0 }))
        assert.deepStrictEqual(yield* memory.removed, [{ ids: [tvItem!.id], deleteFiles: false }])
      })
    )
  )

  it.effect("history is newest first; path_map rewrites complete_dir and storage", () =>
    withSurface(
      ({ base, memory }) =>
        Effect.gen(function* () {
          for (const n of [1, 2, 3]) yield* addfile(base, `Show.S01E0${n}`, NZB.replace("x@y", `${n}@y`), "tv")
          const ids = (yield* memory.items).map((i) => i.id)
          for (const [index, at] of [
            [1, 9_000],
            [0, 8_000],
            [2, 10_000]
          ] as const) {
            yield* TestClock.setTime(at)
            yield* memory.complete(ids[index]!)
          }
          const history = readHistory(
            (yield* get(sonarrUrl(base, "history", { start: 0, limit: 2, category: "tv" }))).text
          )
          assert.deepStrictEqual(
            history.items.map((i) => i.title),
            ["Show.S01E03", "Show.S01E02"]
          )
          assert.strictEqual(history.items[0]!.storage, "/data/usenet/tv/Show.S01E03")
          const config = readConfig((yield* get(sonarrUrl(base, "get_config"))).text)
          assert.strictEqual(config.completeDir, "/data/usenet")
        }),
      { pathMap: (root) => [[root, "/data/usenet"]] }
    )
  )
})

describe("SABnzbd surface: the other calls", () => {
  it.effect("addurl (Prowlarr) takes a URL or a magnet; nzbname names the job; priority -2 adds it paused", () =>
    withSurface(({ base, memory }) =>
      Effect.gen(function* () {
        const url = readAddResponse(
          (yield* get(sonarrUrl(base, "addurl", { name: "https://indexer.example/get/1", cat: "tv", priority: -100 })))
            .text
        )
        const magnet = readAddResponse(
          (yield* get(
            sonarrUrl(base, "addurl", {
              name: "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=X",
              cat: "*",
              priority: -2,
              nzbname: "Renamed"
            })
          )).text
        )
        assert.strictEqual(magnet[0], "SABnzbd_nzo_0123456789abcdef0123456789abcdef01234567")
        assert.notStrictEqual(url[0], magnet[0])
        assert.deepStrictEqual(
          (yield* memory.added).map((a) => [a.source._tag, a.options]),
          [
            ["Url", { category: "tv", paused: false, via: "sabnzbd" }],
            ["Magnet", { category: "", paused: true, via: "sabnzbd", name: "Renamed" }]
          ]
        )
        const queue = readQueue((yield* get(sonarrUrl(base, "queue"))).text)
        assert.deepStrictEqual(
          queue.items.map((i) => [i.title, i.category, i.status]),
          [
            ["1", "tv", "Queued"],
            ["Renamed", "*", "Paused"]
          ]
        )
        const empty = yield* get(sonarrUrl(base, "addurl", { name: "" }))
        assert.deepStrictEqual(JSON.parse(empty.text), { status: false, error: "expects one parameter" })
      })
    )
  )

  it.effect("queue delete (a comma list, all), pause and resume, by item and as a whole", () =>
    withSurface(({ base, memory }) =>
      Effect.gen(function* () {
        const ids: Array<string> = []
        for (const n of [1, 2, 3]) {
          ids.push(readAddResponse((yield* addfile(base, `Job${n}`, NZB.replace("x@y", `${n}@y`), "tv")).text)[0]!)
        }
        const pause = JSON.parse((yield* get(sonarrUrl(base, "queue", { name: "pause", value: ids[0]! }))).text)
        assert.deepStrictEqual(pause, { status: true, nzo_ids: [ids[0]] })
        const statuses = () =>
          Effect.map(get(sonarrUrl(base, "queue")), (r) => readQueue(r.text).items.map((i) => i.status))
        assert.deepStrictEqual(yield* statuses(), ["Paused", "Queued", "Queued"])
        yield* get(sonarrUrl(base, "pause"))
        const paused = readQueue((yield* get(sonarrUrl(base, "queue"))).text)
        assert.isTrue(paused.paused)
        assert.deepStrictEqual(
          sonarrItems(paused, { items: [] }, "tv").map((i) => i.status),
          ["Paused", "Paused", "Paused"]
        )
        yield* get(sonarrUrl(base, "resume"))
        assert.deepStrictEqual(yield* statuses(), ["Queued", "Queued", "Queued"])

        const removed = JSON.parse(
          (yield* get(sonarrUrl(base, "queue", { name: "delete", del_files: 0, value: `${ids[0]},${ids[1]},nope` })))
            .text
        )
        assert.deepStrictEqual(removed, { status: true, nzo_ids: [ids[0], ids[1]] })
        yield* get(sonarrUrl(base, "queue", { name: "delete", value: "all", del_files: 1 }))
        assert.deepStrictEqual(
          (yield* memory.removed).map((r) => r.deleteFiles),
          [false, true]
        )
        assert.deepStrictEqual(yield* memory.items, [])
        const none = JSON.parse((yield* get(sonarrUrl(base, "queue", { name: "delete" }))).text)
        assert.deepStrictEqual(none, { status: false, error: "expects one parameter" })
      })
    )
  )

  it.effect(
    "mode and key in the multipart fields (@ctrl/sabnzbd's addFile); get_cats; nzo_ids and search filters",
    () =>
      withSurface(({ base }) =>
        Effect.gen(function* () {
          const added = yield* Effect.promise(async () => {
            const form = new FormData()
            form.append("mode", "addfile")
            form.append("output", "json")
            form.append("cat", "tv")
            form.append("apikey", KEY)
            form.append("name", new Blob([NZB], { type: "application/x-nzb" }), "Show.S02E01.nzb")
            const response = await fetch(new URL("/sabnzbd/api", base), { method: "POST", body: form })
            return readAddResponse(await response.text())
          })
          yield* addfile(base, "Other.S01E01", NZB.replace("x@y", "o@y"), "tv")
          const cats = JSON.parse((yield* get(sonarrUrl(base, "get_cats"))).text)
          assert.deepStrictEqual(cats, { categories: ["*", "movies", "tv"] })
          const byId = readQueue((yield* get(sonarrUrl(base, "queue", { nzo_ids: added[0]! }))).text)
          assert.deepStrictEqual(
            byId.items.map((i) => i.title),
            ["Show.S02E01"]
          )
          const bySearch = readQueue((yield* get(sonarrUrl(base, "queue", { search: "other" }))).text)
          assert.deepStrictEqual(
            bySearch.items.map((i) => i.title),
            ["Other.S01E01"]
          )
        })
      )
  )

  it.effect("fullstatus gives the complete folder; history delete 'failed' removes only failed items", () =>
    withSurface(({ base, memory, root }) =>
      Effect.gen(function* () {
        const status = JSON.parse((yield* get(sonarrUrl(base, "fullstatus", { skip_dashboard: 1 }))).text)
        assert.strictEqual(status.status.completedir, root)
        yield* addfile(base, "Good", NZB, "tv")
        yield* addfile(base, "Bad", NZB.replace("x@y", "b@y"), "tv")
        const [good, bad] = yield* memory.items
        yield* memory.complete(good!.id)
        yield* memory.fail(bad!.id, "expired")
        yield* get(sonarrUrl(base, "history", { name: "delete", value: "failed", del_files: 1 }))
        assert.deepStrictEqual(yield* memory.removed, [{ ids: [bad!.id], deleteFiles: true }])
      })
    )
  )
})

describe("SABnzbd surface: bad requests get SABnzbd's answers", () => {
  it.effect("no key, a wrong key: API Key Required / API Key Incorrect (status:false); version needs none", () =>
    withSurface(({ base }) =>
      Effect.gen(function* () {
        const missing = new URL("/api?mode=queue&output=json", base)
        assert.deepStrictEqual(JSON.parse((yield* get(missing)).text), { status: false, error: "API Key Required" })
        const wrong = yield* get(sonarrUrl(base, "get_config", {}, "not-the-key"))
        assert.strictEqual(wrong.status, 200, "Sonarr shows the message only on a 2xx answer")
        assert.deepStrictEqual(JSON.parse(wrong.text), { status: false, error: "API Key Incorrect" })
        const version = yield* get(new URL("/sabnzbd/api?mode=version&output=json", base))
        assert.match(readVersion(version.text), SONARR_VERSION_REGEX)
      })
    )
  )

  it.effect("an unknown mode is 'not implemented'; an upload without a file 'expects one parameter'", () =>
    withSurface(({ base, memory }) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(JSON.parse((yield* get(sonarrUrl(base, "frobnicate"))).text), {
          status: false,
          error: "not implemented"
        })
        const empty = yield* Effect.promise(async () => {
          const form = new FormData()
          form.append("cat", "tv")
          const response = await fetch(sonarrUrl(base, "addfile"), { method: "POST", body: form })
          return JSON.parse(await response.text())
        })
        assert.deepStrictEqual(empty, { status: false, error: "expects one parameter" })
        const notNzb = readRaw((yield* addfile(base, "junk", "hello", "tv")).text)
        assert.deepStrictEqual(notNzb, {
          status: false,
          error: "junk.nzb: not an NZB file (no <nzb> element)",
          nzo_ids: []
        })
        assert.deepStrictEqual(yield* memory.items, [])
      })
    )
  )

  it.effect("any Host is answered (an app reaching dlsync by its container name): the API key is the gate", () =>
    withSurface(({ base }) =>
      Effect.gen(function* () {
        const asHost = (url: URL) =>
          Effect.promise(
            () =>
              new Promise<{ status: number; body: string }>((resolve, reject) => {
                const req = Http.request(url, { headers: { host: "dlsync:8085" } }, (res) => {
                  let body = ""
                  res.on("data", (chunk: Buffer) => {
                    body += chunk.toString()
                  })
                  res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
                })
                req.on("error", reject)
                req.end()
              })
          )
        const queue = yield* asHost(sonarrUrl(base, "queue"))
        assert.strictEqual(queue.status, 200)
        assert.property(JSON.parse(queue.body), "queue")
        const wrongKey = yield* asHost(sonarrUrl(base, "queue", {}, "not-the-key"))
        assert.deepStrictEqual(JSON.parse(wrongKey.body), { status: false, error: "API Key Incorrect" })
      })
    )
  )
})

const readRaw = (text: string): unknown => JSON.parse(text)
