/**
 * The intake queue over a real store: what `add`, `list`, `remove`, `pause`, `resume` and
 * the categories record, and how a record reads as an item (state, paths) as the runner
 * moves it on. The runner's requests are covered against the emulator
 * (test/integration/intake.test.ts).
 */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { IntakeLive } from "../../src/intake/IntakeLive.ts"
import { IntakeSettings } from "../../src/intake/IntakeSettings.ts"
import { Database } from "../../src/store/Database.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { tempDir } from "../store/helpers.ts"
import { bencode } from "./bencode.ts"

const ROOT = "/mnt/media"
const HEX = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const MAGNET = { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Show.S01E01` } as const
const id = `btih:${HEX}` as IntakeId

const layer = (dir: string) =>
  IntakeLive.pipe(
    Layer.provideMerge(IntakeTables.layer),
    Layer.provide(Database.layer(dir)),
    Layer.provide(
      IntakeSettings.layer({ root: ROOT, categories: { tv: { selection: "largest", cached_only: false } } })
    )
  )

const withIntake = <A, E>(dir: string, effect: Effect.Effect<A, E, Intake | IntakeTables>) =>
  effect.pipe(Effect.provide(layer(dir), { local: true }))

describe("IntakeLive", () => {
  it.effect("records a release before anything is sent, and returns the same item when it is added again", () =>
    Effect.gen(function* () {
      const dir = Path.join(tempDir(), "state")
      yield* TestClock.setTime(1_000)
      const first = yield* withIntake(
        dir,
        Effect.gen(function* () {
          const intake = yield* Intake
          return yield* intake.add(MAGNET, { category: "tv", via: "test" })
        })
      )
      assert.strictEqual(first.id, id)
      assert.strictEqual(first.state, "queued")
      assert.strictEqual(first.savePath, "/mnt/media/tv")
      assert.strictEqual(first.contentPath, "/mnt/media/tv/Show.S01E01")
      assert.strictEqual(first.addedAt, 1_000)
      // Another process (a new connection) sees it, and adding it again changes nothing.
      yield* TestClock.setTime(2_000)
      const again = yield* withIntake(
        dir,
        Effect.gen(function* () {
          const intake = yield* Intake
          const item = yield* intake.add(MAGNET, { category: "movies", via: "test" })
          const tables = yield* IntakeTables
          const record = Option.getOrThrow(yield* tables.get(id))
          assert.strictEqual(record.phase, "new")
          assert.strictEqual(new TextDecoder().decode(record.source), MAGNET.uri)
          return item
        })
      )
      assert.deepStrictEqual(again, first)
    })
  )

  it.effect("a removal leaves a tombstone owing its cleanup; a later add revives it", () =>
    withIntake(
      Path.join(tempDir(), "state"),
      Effect.gen(function* () {
        const intake = yield* Intake
        const tables = yield* IntakeTables
        yield* intake.add(MAGNET, { category: "tv", via: "test" })
        yield* tables.update(id, ["new"], { phase: "sent", downloadId: "dl_1", status: "downloading" }, 5)
        yield* intake.remove([id], true)
        assert.deepStrictEqual(yield* intake.list(), [])
        const tomb = Option.getOrThrow(yield* tables.get(id))
        assert.strictEqual(tomb.phase, "removed")
        assert.strictEqual(tomb.cleanup, "files")
        assert.deepStrictEqual(
          (yield* tables.owingCleanup).map((r) => r.id),
          [id]
        )
        const revived = yield* intake.add(MAGNET, { category: "tv", via: "test" })
        assert.strictEqual(revived.state, "queued")
        assert.strictEqual(revived.downloadId, null)
      })
    )
  )

  it.effect("pause, resume (a parked intake starts over), setCategory, categories", () =>
    withIntake(
      Path.join(tempDir(), "state"),
      Effect.gen(function* () {
        const intake = yield* Intake
        const tables = yield* IntakeTables
        yield* intake.add(MAGNET, { category: "tv", via: "test" })
        yield* intake.pause([id])
        assert.strictEqual((yield* intake.list({ ids: [id] }))[0]?.state, "paused")
        yield* tables.update(id, ["new"], { phase: "parked", reason: "no video item in the selection" }, 5)
        const parked = (yield* intake.list())[0]
        assert.strictEqual(parked?.state, "paused")
        yield* intake.resume([id])
        const resumed = Option.getOrThrow(yield* tables.get(id))
        assert.strictEqual(resumed.phase, "new")
        assert.strictEqual(resumed.reason, null)
        yield* intake.setCategory([id], "anime")
        assert.strictEqual((yield* intake.list({ category: "anime" }))[0]?.savePath, "/mnt/media/anime")
        assert.strictEqual(Option.getOrThrow(yield* tables.get(id)).directory, "anime")
        yield* intake.createCategory("music")
        assert.deepStrictEqual(yield* intake.categories, [
          { name: "music", savePath: "/mnt/media/music" },
          { name: "tv", savePath: "/mnt/media/tv" }
        ])
        yield* intake.removeCategories(["music", "tv"])
        assert.deepStrictEqual(
          (yield* intake.categories).map((c) => c.name),
          ["tv"],
          "configured categories stay"
        )
        const bad = yield* Effect.flip(intake.createCategory("../etc"))
        assert.strictEqual(bad.reason, "invalid")
        const badAdd = yield* Effect.flip(
          intake.add(
            { _tag: "TorrentFile", fileName: "x.torrent", content: Buffer.from("nope") },
            { category: "", via: "t" }
          )
        )
        assert.strictEqual(badAdd.problem, "x.torrent: not a torrent file (no bencoded info dictionary)")
      })
    )
  )

  it.effect("reads as downloading, mirroring, then completed with contentPath the release's folder or file", () =>
    withIntake(
      Path.join(tempDir(), "state"),
      Effect.gen(function* () {
        const intake = yield* Intake
        const tables = yield* IntakeTables
        const torrent = bencode({
          info: { name: "Single.mkv", length: 10, "piece length": 16384, pieces: new Uint8Array(20) }
        })
        const single = yield* intake.add(
          { _tag: "TorrentFile", fileName: "s.torrent", content: torrent },
          { category: "tv", via: "t" }
        )
        yield* intake.add(MAGNET, { category: "tv", via: "t" })
        yield* tables.update(
          id,
          ["new"],
          { phase: "sent", downloadId: "dl_1", status: "downloading", progress: 0.4, size: 100 },
          5
        )
        let item = (yield* intake.list({ ids: [id] }))[0]
        assert.strictEqual(item?.state, "downloading")
        assert.strictEqual(item?.progress, 0.4)
        const files = [
          { remoteId: "f1", path: "Show.S01E01/Show.S01E01.mkv", size: 90, localBytes: 90 },
          { remoteId: "f2", path: "Show.S01E01/Subs/en.srt", size: 10, localBytes: 0 }
        ]
        yield* tables.update(id, ["sent"], { status: "completed", files, progress: 0.9 }, 6)
        item = (yield* intake.list({ ids: [id] }))[0]
        assert.strictEqual(item?.state, "mirroring")
        assert.strictEqual(item?.remaining, 10)
        assert.strictEqual(item?.contentPath, "/mnt/media/tv/Show.S01E01")
        yield* tables.update(id, ["sent"], { completedAt: 7 }, 7)
        item = (yield* intake.list({ ids: [id] }))[0]
        assert.strictEqual(item?.state, "completed")
        assert.strictEqual(item?.progress, 1)

        yield* tables.update(
          single.id,
          ["new"],
          {
            phase: "sent",
            status: "completed",
            files: [{ remoteId: "f3", path: "Single.mkv", size: 10, localBytes: 10 }],
            completedAt: 8
          },
          8
        )
        const done = (yield* intake.list({ ids: [single.id] }))[0]
        assert.strictEqual(done?.contentPath, "/mnt/media/tv/Single.mkv")
        assert.notStrictEqual(done?.contentPath, done?.savePath)

        yield* tables.update(id, ["sent"], { phase: "failed", reason: "failed on the service: source gone" }, 9)
        // A completed item stays completed: the app may have moved its files away.
        assert.strictEqual((yield* intake.list({ ids: [id] }))[0]?.state, "completed")
      })
    )
  )
})
