import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { MediaServerSettings } from "../../src/config/afterLandingSettings.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { MirrorEvents, publishEvent } from "../../src/events/MirrorEvents.ts"
import { mediaRefreshLayer } from "../../src/mediaservers/MediaRefresh.ts"
import { advanceUntil, jellyfin, plex, type Recorded, standIn } from "../standins/recordingServer.ts"

const ROOT = "/mirror"
const KEY = "jf-secret-key"
const TOKEN = "plex-secret-token"

const landed = (path: string): MirrorEvent => ({
  _tag: "file_complete",
  path,
  absolutePath: `${ROOT}/${path}`,
  fileId: `f_${path.length}`,
  size: 100,
  kind: "video",
  category: path.split("/")[0] ?? null
})

const server = (url: string, token: string, pathMap: MediaServerSettings["path_map"] = []): MediaServerSettings => ({
  url,
  token: Redacted.make(token),
  path_map: pathMap
})

/** Runs `body` with the event source and a media refresh, then closes them (which delivers what is owed). */
const withRefresh = <A, E>(
  settings: Parameters<typeof mediaRefreshLayer>[1],
  body: Effect.Effect<A, E, MirrorEvents>,
  logs?: Array<string>
) => {
  const layer = mediaRefreshLayer(ROOT, settings).pipe(Layer.provideMerge(MirrorEvents.layer))
  const logged = Logger.layer([Logger.make((o) => logs?.push(Logger.formatLogFmt.log(o)))])
  return Effect.scoped(Effect.provide(body, Layer.fresh(layer))).pipe(Effect.provide(logged))
}

const updatesOf = (r: Recorded) =>
  (JSON.parse(r.body) as { Updates: Array<{ Path: string; UpdateType: string }> }).Updates

describe("media refresh: Jellyfin", () => {
  it.effect("a season of 20 episodes landing over 40 s is one refresh of its folder, mapped for the container", () =>
    Effect.gen(function* () {
      const jf = yield* standIn(jellyfin(KEY))
      yield* withRefresh(
        { jellyfin: server(jf.url, KEY, [["/mirror", "/media"]]), plex: null },
        Effect.gen(function* () {
          for (let i = 1; i <= 20; i++) {
            yield* publishEvent(landed(`TV/Show/Season 1/e${i}.mkv`))
            yield* TestClock.adjust("2 seconds")
          }
          assert.strictEqual(jf.requests.length, 0, "nothing while the burst goes on")
          yield* advanceUntil(() => jf.requests.length >= 1)
          yield* TestClock.adjust("5 minutes")
        })
      )
      assert.strictEqual(jf.requests.length, 1)
      const [request] = jf.requests
      assert.strictEqual(request?.headers["x-emby-token"], KEY)
      assert.strictEqual(request?.headers.authorization, `MediaBrowser Token="${KEY}"`)
      assert.deepStrictEqual(updatesOf(request!), [{ Path: "/media/TV/Show/Season 1", UpdateType: "Created" }])
    })
  )

  it.effect("files that keep landing are still refreshed at least every DEBOUNCE_MAX_MS", () =>
    Effect.gen(function* () {
      const jf = yield* standIn(jellyfin(KEY))
      yield* withRefresh(
        { jellyfin: server(jf.url, KEY), plex: null },
        Effect.gen(function* () {
          // One file every 2 s for 130 s: never quiet for DEBOUNCE_QUIET_MS.
          for (let t = 0; t < 130_000; t += 2_000) {
            yield* publishEvent(landed(`Movies/m${t}.mkv`))
            yield* TestClock.adjust("2 seconds")
          }
          yield* advanceUntil(() => jf.requests.length >= 3)
          yield* TestClock.adjust("5 minutes")
        })
      )
      assert.strictEqual(jf.requests.length, 3, "at 60 s, 120 s, and after the last file")
      for (const r of jf.requests)
        assert.deepStrictEqual(updatesOf(r), [{ Path: "/mirror/Movies", UpdateType: "Created" }])
    })
  )

  it.effect("a moved or trashed item sends its old folder too, each folder once", () =>
    Effect.gen(function* () {
      const jf = yield* standIn(jellyfin(KEY))
      yield* withRefresh(
        { jellyfin: server(jf.url, KEY), plex: null },
        Effect.gen(function* () {
          yield* publishEvent({ _tag: "local_moved", from: "Movies/Old/a.mkv", to: "Movies/New/a.mkv" })
          yield* publishEvent({ _tag: "local_removed", path: "TV/S1/x.mkv", how: "trash" })
          yield* publishEvent(landed("Movies/New/b.mkv"))
          yield* publishEvent({ _tag: "local_removed", path: "TV/S1/y.mkv", how: "trash" })
          yield* advanceUntil(() => jf.requests.length >= 1)
        })
      )
      assert.deepStrictEqual(updatesOf(jf.requests[0]!), [
        { Path: "/mirror/Movies/Old", UpdateType: "Modified" },
        { Path: "/mirror/Movies/New", UpdateType: "Created" },
        { Path: "/mirror/TV/S1", UpdateType: "Modified" }
      ])
    })
  )

  it.effect("what is still owed at shutdown is sent then, not lost", () =>
    Effect.gen(function* () {
      const jf = yield* standIn(jellyfin(KEY))
      yield* withRefresh({ jellyfin: server(jf.url, KEY), plex: null }, publishEvent(landed("Movies/m.mkv")))
      assert.deepStrictEqual(updatesOf(jf.requests[0]!), [{ Path: "/mirror/Movies", UpdateType: "Created" }])
    })
  )

  it.effect("a refusing server is retried with backoff and logged once, without its key", () =>
    Effect.gen(function* () {
      let refusals = 2
      const jf = yield* standIn((r) => (refusals-- > 0 ? { status: 503, body: "starting up" } : jellyfin(KEY)(r)))
      const logs: Array<string> = []
      yield* withRefresh(
        { jellyfin: server(jf.url, KEY), plex: null },
        Effect.gen(function* () {
          yield* publishEvent(landed("Movies/m.mkv"))
          yield* advanceUntil(() => jf.requests.length >= 3)
        }),
        logs
      )
      assert.strictEqual(jf.requests.length, 3)
      const failures = logs.filter((l) => l.includes("failed"))
      assert.strictEqual(failures.length, 1, logs.join("\n"))
      assert.include(failures[0], "HTTP 503")
      assert.notInclude(logs.join("\n"), KEY)
    })
  )
})

describe("media refresh: Plex", () => {
  it.effect("finds each folder's section from /library/sections and scans that folder alone", () =>
    Effect.gen(function* () {
      const px = yield* standIn(
        plex(TOKEN, [
          { key: "1", title: "Movies", paths: ["/data/movies"] },
          { key: "2", title: "TV", paths: ["/data/tv", "/data/tv2"] }
        ])
      )
      yield* withRefresh(
        { jellyfin: null, plex: server(px.url, TOKEN, [["/mirror", "/data"]]) },
        Effect.gen(function* () {
          yield* publishEvent(landed("tv/Show/S1/e1.mkv"))
          yield* publishEvent(landed("tv/Show/S1/e2.mkv"))
          yield* publishEvent(landed("movies/Film (2001)/film.mkv"))
          yield* advanceUntil(() => px.requests.length >= 3)
        })
      )
      const seen = px.requests.map((r) => `${r.url.pathname} ${r.url.searchParams.get("path") ?? ""}`.trim())
      assert.deepStrictEqual(seen, [
        "/library/sections",
        "/library/sections/2/refresh /data/tv/Show/S1",
        "/library/sections/1/refresh /data/movies/Film (2001)"
      ])
      for (const r of px.requests) {
        assert.strictEqual(r.headers["x-plex-token"], TOKEN)
        assert.notInclude(r.url.href, TOKEN)
      }
    })
  )
})
