import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { failedReportsLayer, UNTRACKED_AFTER_MISSES } from "../../src/arr/FailedReports.ts"
import type { ArrSettings } from "../../src/config/arrSettings.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { DATABASE_FILE, Database } from "../../src/store/Database.ts"
import { arrStandIn } from "../standins/arrStandIn.ts"
import { advanceUntil, type Recorded, standIn } from "../standins/recordingServer.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"

const KEY = "sonarr-api-key"
const HASH = "c9e15763f722f23e98a29decdfae341b98d53056"
const OTHER = "0123456789abcdef0123456789abcdef01234567"

/** One app configured (Sonarr unless told), at `url`. */
const settings = (url: string, app: keyof ArrSettings = "sonarr"): ArrSettings => ({
  sonarr: null,
  radarr: null,
  lidarr: null,
  readarr: null,
  [app]: { url, api_key: Redacted.make(KEY), path_map: [] }
})

/** The queue spans two pages of 100: the failed release is on the second. */
const queue = () => [
  ...Array.from({ length: 150 }, (_, i) => ({ id: i + 1, downloadId: `SAB_NZO_${i}`, title: `Other.S01E${i}` })),
  { id: 501, downloadId: HASH.toUpperCase(), title: "Show.S01E01.1080p" }
]

const marks = (requests: ReadonlyArray<Recorded>) => requests.filter((r) => r.method === "DELETE")

/** Lets `minutes` of test time pass, in steps shorter than a call's deadline, the stand-in's answers coming in between. */
const minutesPass = (minutes: number) => {
  let steps = 0
  return advanceUntil(() => steps++ >= minutes * 6, "10 seconds")
}

/**
 * A daemon's life: the reporter over `stateDir`, with an intake holding a failed torrent and a
 * failed NZB, while `during` runs.
 */
const life = <E>(url: string | ArrSettings, stateDir: string, root: string, during: Effect.Effect<void, E>) =>
  Effect.gen(function* () {
    const control = makeMemoryIntake(root)
    const torrent = yield* control.intake.add(
      { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}&dn=Show.S01E01.1080p` },
      { category: "tv", via: "qbittorrent" }
    )
    const nzb = yield* control.intake.add(
      { _tag: "NzbFile", fileName: "Show.S01E02.nzb", content: new TextEncoder().encode("<nzb></nzb>") },
      { category: "tv", via: "sabnzbd" }
    )
    yield* control.fail(torrent.id, "blocked: infringing content")
    yield* control.fail(nzb.id, "no segments")
    const layer = failedReportsLayer(typeof url === "string" ? settings(url) : url).pipe(
      Layer.provide(Database.layer(stateDir)),
      Layer.provide(Layer.succeed(Intake, control.intake)),
      Layer.provide(MirrorEvents.layer)
    )
    return yield* Effect.scoped(Effect.andThen(Layer.build(Layer.fresh(layer)), during))
  })

/** The reports the reporter has recorded, read from the state database as a restart reads it. */
const recordedReports = (stateDir: string): number => {
  const db = new BetterSqlite3(Path.join(stateDir, DATABASE_FILE), { readonly: true, fileMustExist: true })
  try {
    return Number(db.prepare("SELECT count(*) FROM arr_failure_reports").pluck().get())
  } finally {
    db.close()
  }
}

const lookups = (requests: ReadonlyArray<Recorded>) =>
  requests.filter((r) => r.method === "GET" && r.url.pathname === "/api/v3/queue")

describe("failed releases reported to the apps", () => {
  it.effect("a failed torrent is marked failed once, with blocklist and search, and not again after a restart", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-arr-"))
      const sonarr = yield* standIn(
        arrStandIn({ apiKey: KEY, mount: { hostDir: dir, appPath: "/data" }, queue: queue() })
      )
      const stateDir = Path.join(dir, "state")
      const root = Path.join(dir, "root")

      // Until the report is recorded, not only sent: a daemon stopped between the app's answer and
      // the record reports again after its restart (at least once, FailedReports.ts).
      yield* life(
        sonarr.url,
        stateDir,
        root,
        advanceUntil(() => marks(sonarr.requests).length >= 1 && recordedReports(stateDir) >= 1, "5 seconds")
      )
      const [mark] = marks(sonarr.requests)
      assert.strictEqual(mark?.url.pathname, "/api/v3/queue/501")
      assert.strictEqual(mark?.url.searchParams.get("blocklist"), "true")
      assert.strictEqual(mark?.url.searchParams.get("skipRedownload"), "false")
      assert.strictEqual(mark?.url.searchParams.get("removeFromClient"), "true")
      assert.strictEqual(mark?.headers["x-api-key"], KEY)
      const pages = lookups(sonarr.requests)
      assert.deepStrictEqual(
        pages.map((r) => r.url.searchParams.get("page")),
        ["1", "2"],
        "the second page holds it; the NZB is not looked up"
      )
      assert.strictEqual(pages[0]?.url.searchParams.get("includeUnknownSeriesItems"), "true")

      // Still failed, still in the app's queue: after a restart and more than ten minutes, nothing more.
      const before = sonarr.requests.length
      yield* life(sonarr.url, stateDir, root, minutesPass(UNTRACKED_AFTER_MISSES + 2))
      assert.strictEqual(marks(sonarr.requests).length, 1, "reported once")
      assert.deepStrictEqual(lookups(sonarr.requests.slice(before)), [], "a reported release is not looked up again")
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("an NZB's failure is left to the SABnzbd surface, and a torrent in no app's queue is given up once", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-arr-"))
      const sonarr = yield* standIn(
        arrStandIn({
          apiKey: KEY,
          mount: { hostDir: dir, appPath: "/data" },
          queue: [{ id: 1, downloadId: OTHER.toUpperCase(), title: "Other" }]
        })
      )
      const during = Effect.andThen(
        advanceUntil(() => lookups(sonarr.requests).length >= UNTRACKED_AFTER_MISSES, "10 seconds"),
        minutesPass(3)
      )
      yield* life(sonarr.url, Path.join(dir, "state"), Path.join(dir, "root"), during)
      assert.strictEqual(marks(sonarr.requests).length, 0)
      assert.strictEqual(lookups(sonarr.requests).length, UNTRACKED_AFTER_MISSES, "one lookup a round until given up")
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("an app that is starting (503) is retried with backoff until it takes the report", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-arr-"))
      const app = arrStandIn({ apiKey: KEY, mount: { hostDir: dir, appPath: "/data" }, queue: queue() })
      let refusals = 3
      const sonarr = yield* standIn((r) => (refusals-- > 0 ? { status: 503, body: "starting" } : app(r)))
      const start = yield* Clock.currentTimeMillis
      yield* life(
        sonarr.url,
        Path.join(dir, "state"),
        Path.join(dir, "root"),
        advanceUntil(() => marks(sonarr.requests).length >= 1, "1 second")
      )
      assert.deepStrictEqual(
        sonarr.requests.map((r) => r.method),
        ["GET", "GET", "GET", "GET", "GET", "DELETE"],
        "three refused lookups, then both pages and the mark"
      )
      const elapsed = (yield* Clock.currentTimeMillis) - start
      assert.isBelow(elapsed, 60_000, "within the round, by the backoff (2 s, 4 s, 8 s at most)")
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("Lidarr: the same through its v1 API", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-arr-"))
      const lidarr = yield* standIn(
        arrStandIn({
          apiKey: KEY,
          appName: "Lidarr",
          mount: { hostDir: dir, appPath: "/data" },
          queue: [{ id: 9, downloadId: HASH.toUpperCase(), title: "Artist - Album" }]
        })
      )
      yield* life(
        settings(lidarr.url, "lidarr"),
        Path.join(dir, "state"),
        Path.join(dir, "root"),
        advanceUntil(() => marks(lidarr.requests).length >= 1, "5 seconds")
      )
      assert.deepStrictEqual(
        lidarr.requests.map((r) => `${r.method} ${r.url.pathname}`),
        ["GET /api/v1/queue", "DELETE /api/v1/queue/9"]
      )
      assert.strictEqual(lidarr.requests[0]?.url.searchParams.get("includeUnknownArtistItems"), "true")
      assert.strictEqual(lidarr.requests[1]?.url.searchParams.get("blocklist"), "true")
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("nothing failed: the apps are never asked; a release that fails later is reported at once", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-arr-"))
      const sonarr = yield* standIn(
        arrStandIn({ apiKey: KEY, mount: { hostDir: dir, appPath: "/data" }, queue: queue() })
      )
      const control = makeMemoryIntake(Path.join(dir, "root"))
      const layer = failedReportsLayer(settings(sonarr.url)).pipe(
        Layer.provide(Database.layer(Path.join(dir, "state"))),
        Layer.provide(Layer.succeed(Intake, control.intake)),
        Layer.provideMerge(MirrorEvents.layer)
      )
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(Layer.fresh(layer))
          yield* minutesPass(3)
          assert.deepStrictEqual(sonarr.requests, [], "no failed release: no round, no request")
          const events = Context.get(context, MirrorEvents)
          const failedAt = yield* Clock.currentTimeMillis
          yield* events.publish({
            _tag: "release_failed",
            id: `btih:${HASH}`,
            name: "Show.S01E01.1080p",
            category: "tv",
            via: "qbittorrent",
            reason: "failed on the service: source gone"
          })
          yield* advanceUntil(() => marks(sonarr.requests).length >= 1, "1 second")
          assert.isBelow((yield* Clock.currentTimeMillis) - failedAt, 60_000, "before the next minute's round")
        })
      )
      Fs.rmSync(dir, { recursive: true, force: true })
    })
  )
})
