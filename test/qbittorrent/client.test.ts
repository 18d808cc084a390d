/**
 * The qBittorrent API driven by a client no one here wrote (@ctrl/qbittorrent, used by
 * many *arr companions), call by call, against the server over an in-memory intake.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { QBittorrent } from "@ctrl/qbittorrent"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import { APP_VERSION, WEBAPI_VERSION } from "../../src/qbittorrent/endpoints.ts"
import { makeTorrent } from "../support/torrentFixture.ts"
import { PASSWORD, startQbit, USERNAME } from "./harness.ts"

const MAGNET_HASH = "0123456789abcdef0123456789abcdef01234567"
const MAGNET = `magnet:?xt=urn:btih:${MAGNET_HASH.toUpperCase()}&dn=Show.S01E01.1080p&tr=http%3A%2F%2Ftracker.invalid%2Fannounce`

const clientOf = (url: string, password = PASSWORD) => new QBittorrent({ baseUrl: url, username: USERNAME, password })

const call = <A>(f: () => Promise<A>) => Effect.promise(f)

describe("qBittorrent API through @ctrl/qbittorrent", () => {
  it.effect("signs in, reports qBittorrent 5 and Web API 2.11, and preferences the apps accept", () =>
    Effect.gen(function* () {
      const { url, root } = yield* startQbit({ pathMap: () => [["/", "/host"]] })
      const client = clientOf(url)
      assert.isTrue(yield* call(() => client.login()))
      assert.strictEqual(yield* call(() => client.getAppVersion()), APP_VERSION)
      assert.strictEqual(yield* call(() => client.getApiVersion()), WEBAPI_VERSION)
      assert.isTrue(client.exportState().version?.isVersion5OrHigher)
      const prefs = yield* call(() => client.getPreferences())
      assert.strictEqual(prefs.save_path, `/host${root}`)
      assert.isTrue(prefs.dht)
      assert.isTrue(prefs.queueing_enabled)
      assert.isFalse(prefs.max_ratio_enabled)
      assert.strictEqual(Number(prefs.max_ratio_act), 0)
      assert.strictEqual(yield* call(() => client.getDefaultSavePath()), `/host${root}`)
    }).pipe(Effect.scoped)
  )

  it.effect("a wrong password: login throws (no cookie), and nothing else answers", () =>
    Effect.gen(function* () {
      const { url } = yield* startQbit()
      const client = clientOf(url, "wrong")
      const failure = yield* Effect.flip(Effect.tryPromise(() => client.login()))
      assert.include(String(failure.cause), "Cookie not found")
      const refused = yield* Effect.flip(Effect.tryPromise(() => client.listTorrents()))
      assert.include(String(refused.cause), "Cookie not found")
    }).pipe(Effect.scoped)
  )

  it.effect("adds a magnet and a .torrent upload; each is listed, has properties and files at once", () =>
    Effect.gen(function* () {
      const { url, root, control } = yield* startQbit()
      const client = clientOf(url)
      const torrent = makeTorrent("Movie.2024.2160p", [
        { path: ["Movie.2024.2160p.mkv"], size: 40_000 },
        { path: ["Subs", "en.srt"], size: 100 }
      ])

      assert.isTrue(yield* call(() => client.addMagnet(MAGNET, { category: "tv-sonarr", tags: "a,b" })))
      assert.isTrue(
        yield* call(() =>
          client.addTorrent(torrent.content, { category: "radarr", paused: "true", filename: "Movie.torrent" })
        )
      )
      assert.deepStrictEqual(
        (yield* control.added).map((a) => ({ source: a.source._tag, options: a.options })),
        [
          { source: "Magnet", options: { category: "tv-sonarr", paused: false, via: "qbittorrent" } },
          { source: "TorrentFile", options: { category: "radarr", paused: true, via: "qbittorrent" } }
        ]
      )

      const all = yield* call(() => client.listTorrents())
      assert.deepStrictEqual(all.map((t) => t.hash).sort(), [MAGNET_HASH, torrent.hash].sort())
      const [magnet] = yield* call(() => client.listTorrents({ category: "tv-sonarr" }))
      assert.strictEqual(magnet?.hash, MAGNET_HASH)
      assert.strictEqual(magnet?.state, "queuedDL")
      assert.strictEqual(magnet?.tags, "a, b")
      assert.strictEqual(magnet?.save_path, Path.join(root, "tv-sonarr"))
      assert.notStrictEqual(magnet?.content_path, magnet?.save_path)
      const [movie] = yield* call(() => client.listTorrents({ hashes: torrent.hash.toUpperCase() }))
      assert.strictEqual(movie?.state, "stoppedDL")
      assert.strictEqual(movie?.name, "Movie.2024.2160p")
      assert.strictEqual(movie?.size, 40_100)
      assert.strictEqual(movie?.eta, 8_640_000)

      const properties = yield* call(() => client.torrentProperties(torrent.hash))
      assert.strictEqual(properties.save_path, Path.join(root, "radarr"))
      assert.strictEqual(properties.total_size, 40_100)
      const files = yield* call(() => client.torrentFiles(torrent.hash))
      assert.deepStrictEqual(
        files.map((f) => [f.name, f.size, f.progress]),
        [
          ["Movie.2024.2160p/Movie.2024.2160p.mkv", 40_000, 0],
          ["Movie.2024.2160p/Subs/en.srt", 100, 0]
        ]
      )

      // The same release again: the existing item, not a second one.
      assert.isTrue(yield* call(() => client.addMagnet(MAGNET, { category: "tv-sonarr" })))
      assert.lengthOf(yield* call(() => client.listTorrents()), 2)
    }).pipe(Effect.scoped)
  )

  it.effect("filters, sorting, offset and limit", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const client = clientOf(url)
      const a = makeTorrent("A.Release")
      const b = makeTorrent("B.Release")
      const c = makeTorrent("C.Release")
      for (const t of [c, a, b]) yield* call(() => client.addTorrent(t.content, { category: "tv" }))
      const id = (hash: string) => IntakeId.make(`btih:${hash}`)
      yield* control.set(id(a.hash), {
        state: "downloading",
        progress: 0.5,
        remaining: 2048,
        rate: 205,
        etaSeconds: 10
      })
      yield* control.complete(id(b.hash))
      yield* control.fail(id(c.hash), "blocked by the service")

      const hashesOf = (filter: Parameters<typeof client.listTorrents>[0]) =>
        Effect.map(
          call(() => client.listTorrents(filter)),
          (list) => list.map((t) => t.name)
        )
      assert.deepStrictEqual(yield* hashesOf({ filter: "all", sort: "name" }), ["A.Release", "B.Release", "C.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "downloading" }), ["A.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "completed" }), ["B.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "stopped" }), ["B.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "paused" }), ["B.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "active" }), ["A.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "inactive", sort: "name" }), ["B.Release", "C.Release"])
      assert.deepStrictEqual(yield* hashesOf({ filter: "errored" }), ["C.Release"])
      assert.deepStrictEqual(yield* hashesOf({ sort: "name", reverse: true, offset: 1, limit: 1 }), ["B.Release"])

      const [downloading] = yield* call(() => client.listTorrents({ hashes: a.hash }))
      assert.strictEqual(downloading?.state, "downloading")
      assert.strictEqual(downloading?.progress, 0.5)
      assert.strictEqual(downloading?.eta, 10)
      assert.strictEqual(downloading?.dlspeed, 205)
      const [done] = yield* call(() => client.listTorrents({ hashes: b.hash }))
      assert.strictEqual(done?.state, "stoppedUP")
      assert.strictEqual(done?.progress, 1)
      assert.strictEqual(done?.amount_left, 0)
      const normalized = yield* call(() => client.getTorrent(b.hash))
      assert.isTrue(normalized.isCompleted)
    }).pipe(Effect.scoped)
  )

  it.effect("categories: create, list, edit, set on torrents, remove", () =>
    Effect.gen(function* () {
      const { url, root, control } = yield* startQbit({ categories: ["tv"] })
      const client = clientOf(url)
      yield* call(() => client.createCategory("movies"))
      const categories = yield* call(() => client.getCategories())
      assert.deepStrictEqual(categories, {
        movies: { name: "movies", savePath: Path.join(root, "movies") },
        tv: { name: "tv", savePath: Path.join(root, "tv") }
      })
      assert.isTrue(yield* call(() => client.editCategory("movies", "/elsewhere")))
      const t = makeTorrent("Show.S02")
      yield* call(() => client.addTorrent(t.content, { category: "tv" }))
      yield* call(() => client.setTorrentCategory(t.hash, "movies"))
      assert.strictEqual((yield* call(() => client.listTorrents({ hashes: t.hash })))[0]?.category, "movies")
      yield* call(() => client.resetTorrentCategory(t.hash))
      assert.strictEqual((yield* call(() => client.listTorrents({ hashes: t.hash })))[0]?.category, "")
      yield* call(() => client.removeCategory("movies"))
      assert.deepStrictEqual(Object.keys(yield* call(() => client.getCategories())), ["tv"])
      assert.deepStrictEqual(
        (yield* control.calls).filter((c) => c.method !== "add").map((c) => c.method),
        ["createCategory", "setCategory", "setCategory", "removeCategories"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("stop/start (and pause/resume), priorities, rechecks, tags, delete with and without files", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit()
      const client = clientOf(url)
      const t = makeTorrent("Show.S03E01")
      const u = makeTorrent("Show.S03E02")
      yield* call(() => client.addTorrent(t.content, { category: "tv" }))
      yield* call(() => client.addTorrent(u.content, { category: "tv" }))
      const state = (hash: string) =>
        Effect.map(
          call(() => client.listTorrents({ hashes: hash })),
          (l) => l[0]?.state
        )

      yield* call(() => client.stopTorrent(t.hash))
      assert.strictEqual(yield* state(t.hash), "stoppedDL")
      yield* call(() => client.startTorrent(t.hash))
      assert.strictEqual(yield* state(t.hash), "queuedDL")
      yield* call(() => client.pauseTorrent("all"))
      assert.strictEqual(yield* state(u.hash), "stoppedDL")
      yield* call(() => client.resumeTorrent([t.hash, u.hash]))
      assert.strictEqual(yield* state(u.hash), "queuedDL")

      for (const f of [
        () => client.topPriority(t.hash),
        () => client.bottomPriority(t.hash),
        () => client.queueUp(t.hash),
        () => client.queueDown(t.hash),
        () => client.recheckTorrent(t.hash),
        () => client.reannounceTorrent(t.hash)
      ]) {
        assert.isTrue(yield* call(f))
      }

      yield* call(() => client.createTags("keep,later"))
      yield* call(() => client.addTorrentTags(t.hash, "keep,sonarr"))
      assert.deepStrictEqual(yield* call(() => client.getTags()), ["keep", "later", "sonarr"])
      assert.strictEqual((yield* call(() => client.listTorrents({ tag: "sonarr" })))[0]?.hash, t.hash)
      yield* call(() => client.removeTorrentTags(t.hash, "keep"))
      assert.strictEqual((yield* call(() => client.listTorrents({ hashes: t.hash })))[0]?.tags, "sonarr")
      yield* call(() => client.deleteTags("later"))
      assert.deepStrictEqual(yield* call(() => client.getTags()), ["keep", "sonarr"])

      yield* call(() => client.removeTorrent(t.hash, false))
      yield* call(() => client.removeTorrent(u.hash.toUpperCase(), true))
      assert.deepStrictEqual(yield* control.removed, [
        { ids: [IntakeId.make(`btih:${t.hash}`)], deleteFiles: false },
        { ids: [IntakeId.make(`btih:${u.hash}`)], deleteFiles: true }
      ])
      assert.deepStrictEqual(yield* call(() => client.listTorrents()), [])
      // Removing what is gone already is not an error (the apps retry removals).
      assert.isTrue(yield* call(() => client.removeTorrent(t.hash, true)))
    }).pipe(Effect.scoped)
  )

  it.effect("a completed release: files are on disk at content_path, mapped for the app", () =>
    Effect.gen(function* () {
      const { url, root, control } = yield* startQbit()
      const client = clientOf(url)
      const t = makeTorrent("Show.S04E01.mkv")
      yield* call(() => client.addTorrent(t.content, { category: "tv" }))
      yield* control.complete(IntakeId.make(`btih:${t.hash}`))
      const [done] = yield* call(() => client.listTorrents({ category: "tv", filter: "completed" }))
      assert.strictEqual(done?.content_path, Path.join(root, "tv", "Show.S04E01.mkv"))
      assert.isTrue(Fs.statSync(done?.content_path ?? "").isFile())
    }).pipe(Effect.scoped)
  )

  it.effect("getAllData, getSyncMainData (a full update, then the changes since its rid) and torrentTrackers", () =>
    Effect.gen(function* () {
      const { url, control } = yield* startQbit({ categories: ["tv"] })
      const client = clientOf(url)
      const t = makeTorrent("Show.S07E01.mkv")
      yield* call(() => client.addMagnet(MAGNET, { category: "tv", tags: "sonarr" }))

      const all = yield* call(() => client.getAllData())
      assert.deepStrictEqual(
        all.torrents.map((x) => [x.id, x.label, x.state]),
        [[MAGNET_HASH, "tv", "queued"]]
      )
      assert.deepStrictEqual(all.labels, [{ id: "tv", name: "tv", count: 1 }])

      const full = yield* call(() => client.getSyncMainData())
      assert.isTrue(full.full_update)
      assert.deepStrictEqual(Object.keys(full.torrents ?? {}), [MAGNET_HASH])
      assert.strictEqual(
        full.torrents?.[MAGNET_HASH]?.magnet_uri,
        `magnet:?xt=urn:btih:${MAGNET_HASH}&dn=Show.S01E01.1080p&tr=http%3a%2f%2ftracker.invalid%2fannounce`
      )
      assert.deepStrictEqual(full.categories?.tv?.name, "tv")
      assert.deepStrictEqual(full.tags, ["sonarr"])
      assert.deepStrictEqual(full.trackers, { "http://tracker.invalid/announce": [MAGNET_HASH] })
      assert.strictEqual(full.server_state?.connection_status, "connected")

      const quiet = yield* call(() => client.getSyncMainData(full.rid))
      assert.strictEqual(quiet.rid, full.rid + 1)
      assert.isUndefined(quiet.full_update)
      assert.isUndefined(quiet.torrents, "nothing changed")

      yield* call(() => client.addTorrent(t.content, { category: "tv" }))
      yield* control.set(IntakeId.make(`btih:${MAGNET_HASH}`), {
        state: "downloading",
        progress: 0.25,
        remaining: 750,
        rate: 100,
        etaSeconds: 8
      })
      const delta = yield* call(() => client.getSyncMainData(quiet.rid))
      assert.deepStrictEqual(Object.keys(delta.torrents ?? {}).sort(), [MAGNET_HASH, t.hash].sort())
      const changed: Readonly<Record<string, unknown>> | undefined = delta.torrents?.[MAGNET_HASH]
      assert.deepStrictEqual(changed, {
        // Only the keys that changed: the view's numbers as qBittorrent names them.
        amount_left: 750,
        completed: 250,
        dlspeed: 100,
        downloaded: 250,
        downloaded_session: 250,
        eta: 8,
        progress: 0.25,
        state: "downloading"
      })
      assert.strictEqual(delta.torrents?.[t.hash]?.name, "Show.S07E01.mkv", "a new torrent comes whole")

      yield* call(() => client.removeTorrent(MAGNET_HASH, false))
      const removed = yield* call(() => client.getSyncMainData(delta.rid))
      assert.deepStrictEqual(removed.torrents_removed, [MAGNET_HASH])
      // The .torrent announces to the same tracker: it stays, with one torrent fewer.
      assert.deepStrictEqual(removed.trackers, { "http://tracker.invalid/announce": [t.hash] })
      assert.isUndefined(removed.trackers_removed)
      // An unknown (or too old) rid gets a full update.
      assert.isTrue((yield* call(() => client.getSyncMainData(999_999))).full_update)

      const trackers = yield* call(() => client.torrentTrackers(t.hash))
      assert.deepStrictEqual(
        trackers.map((x) => [x.url, x.status, x.tier]),
        [
          ["** [DHT] **", 0, -1],
          ["** [PeX] **", 0, -1],
          ["** [LSD] **", 0, -1],
          ["http://tracker.invalid/announce", 1, 0]
        ]
      )
    }).pipe(Effect.scoped)
  )
})
