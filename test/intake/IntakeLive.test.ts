/**
 * The intake queue over a real store: what `add`, `list`, `remove`, `pause`, `resume` and the
 * categories record; that each surface sees only its own releases and categories; and how a
 * record reads as an item once the feed reported its files. The runner's requests are covered
 * against the emulator (IntakeRunner.test.ts, test/integration/).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import type { IntakeId } from "../../src/domain/IntakeId.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { tempDir } from "../store/helpers.ts"
import { bencode } from "./bencode.ts"
import { folder, intakeOverStore, landed, remoteFile, seedRemote } from "./releaseStore.ts"

const HEX = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const MAGNET = { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HEX}&dn=Show.S01E01` } as const
const id = `btih:${HEX}` as IntakeId

describe("IntakeLive", () => {
  it.effect("records a release before anything is sent, and returns the same item when it is added again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_000)
      const intake = yield* Intake
      const tables = yield* IntakeTables
      const first = yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      assert.strictEqual(first.id, id)
      assert.strictEqual(first.state, "queued")
      assert.strictEqual(first.via, "qbittorrent")
      assert.strictEqual(first.contentPath, "/mnt/media/tv/Show.S01E01")
      assert.strictEqual(first.savePath, "/mnt/media/tv")
      const again = yield* intake.add(MAGNET, { category: "movies", via: "qbittorrent" })
      assert.deepStrictEqual(again, first)
      const record = Option.getOrThrow(yield* tables.get(id))
      assert.strictEqual(record.phase, "new")
      assert.strictEqual(new TextDecoder().decode(record.source), MAGNET.uri)
    }).pipe(Effect.provide(intakeOverStore("/mnt/media")))
  )

  it.effect("each surface sees and acts on its own releases and categories; another surface's release is refused", () =>
    Effect.gen(function* () {
      const intake = yield* Intake
      yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      const nzb = yield* intake.add(
        { _tag: "NzbFile", fileName: "Other.nzb", content: new TextEncoder().encode("<nzb></nzb>") },
        { category: "tv", via: "sabnzbd" }
      )
      assert.deepStrictEqual(
        (yield* intake.list({ via: "qbittorrent" })).map((i) => i.id),
        [id]
      )
      assert.deepStrictEqual(
        (yield* intake.list({ via: "sabnzbd" })).map((i) => i.id),
        [nzb.id]
      )
      assert.strictEqual((yield* intake.list()).length, 2, "status and the web page see every release")
      const refused = yield* Effect.flip(intake.add(MAGNET, { category: "tv", via: "sabnzbd" }))
      assert.strictEqual(refused.problem, "Show.S01E01 was already added through qbittorrent; remove it there first")

      yield* intake.createCategory("qbittorrent", "music")
      yield* intake.createCategory("sabnzbd", "books")
      assert.deepStrictEqual(
        (yield* intake.categories("qbittorrent")).map((c) => c.name),
        ["music", "tv"]
      )
      assert.deepStrictEqual(
        (yield* intake.categories("sabnzbd")).map((c) => c.name),
        ["books", "tv"]
      )
      yield* intake.removeCategories("qbittorrent", ["books", "music", "tv"])
      assert.deepStrictEqual(
        (yield* intake.categories("qbittorrent")).map((c) => c.name),
        ["tv"],
        "configured categories stay"
      )
      assert.deepStrictEqual(
        (yield* intake.categories("sabnzbd")).map((c) => c.name),
        ["books", "tv"],
        "another surface's category stays"
      )
    }).pipe(Effect.provide(intakeOverStore("/mnt/media")))
  )

  it.effect("a removal leaves a tombstone owing its cleanup; a later add revives it", () =>
    Effect.gen(function* () {
      const intake = yield* Intake
      const tables = yield* IntakeTables
      yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      yield* tables.update(id, ["new"], { phase: "sent", downloadId: "dl_1", status: "downloading" }, 5)
      yield* intake.remove([id], true)
      assert.deepStrictEqual(yield* intake.list(), [])
      const tomb = Option.getOrThrow(yield* tables.get(id))
      assert.strictEqual(tomb.phase, "removed")
      assert.strictEqual(tomb.cleanup, "files")
      assert.deepStrictEqual(
        (yield* tables.unfinished).map((r) => r.id),
        [id]
      )
      const revived = yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      assert.strictEqual(revived.state, "queued")
      assert.strictEqual(revived.downloadId, null)
    }).pipe(Effect.provide(intakeOverStore("/mnt/media")))
  )

  it.effect("pause, resume (a parked intake starts over), setCategory before it is sent, what cannot be read", () =>
    Effect.gen(function* () {
      const intake = yield* Intake
      const tables = yield* IntakeTables
      yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      yield* intake.pause([id])
      assert.strictEqual((yield* intake.list({ ids: [id] }))[0]?.state, "paused")
      yield* tables.update(id, ["new"], { phase: "parked", reason: "no video item in the selection" }, 5)
      yield* intake.resume([id])
      const resumed = Option.getOrThrow(yield* tables.get(id))
      assert.strictEqual(resumed.phase, "new")
      assert.strictEqual(resumed.reason, null)
      yield* intake.setCategory([id], "anime")
      assert.strictEqual((yield* intake.list({ category: "anime" }))[0]?.savePath, "/mnt/media/anime")
      assert.strictEqual(Option.getOrThrow(yield* tables.get(id)).directory, "anime")
      const bad = yield* Effect.flip(intake.createCategory("qbittorrent", "../etc"))
      assert.strictEqual(bad.reason, "invalid")
      const badAdd = yield* Effect.flip(
        intake.add(
          { _tag: "TorrentFile", fileName: "x.torrent", content: Buffer.from("nope") },
          { category: "", via: "cli" }
        )
      )
      assert.strictEqual(badAdd.problem, "x.torrent: not a torrent file (no bencoded info dictionary)")
    }).pipe(Effect.provide(intakeOverStore("/mnt/media")))
  )

  it.effect("its files are the store's items with its download id: progress, paths and file names follow them", () => {
    const root = tempDir("dlsync-intake-root-")
    return Effect.gen(function* () {
      const intake = yield* Intake
      const tables = yield* IntakeTables
      const torrent = bencode({
        info: { name: "Single.mkv", length: 10, "piece length": 16384, pieces: new Uint8Array(20) }
      })
      const single = yield* intake.add(
        { _tag: "TorrentFile", fileName: "s.torrent", content: torrent },
        { category: "tv", via: "qbittorrent" }
      )
      yield* intake.add(MAGNET, { category: "tv", via: "qbittorrent" })
      yield* tables.update(id, ["new"], { phase: "sent", downloadId: "dl_1", status: "downloading", size: 100 }, 5)
      yield* tables.update(single.id, ["new"], { phase: "sent", downloadId: "dl_2", status: "completed" }, 5)
      const video = remoteFile("f1", "r1", "Show.S01E01.mkv", 90, "dl_1")
      const subtitle = remoteFile("f2", "r2", "en.srt", 10, "dl_1")
      // Another download's file in the same folders: not this release's.
      const stranger = remoteFile("f9", "r1", "Stranger.mkv", 5, "dl_9")
      yield* seedRemote([
        folder("c", null, "tv"),
        folder("r1", "c", "Show.S01E01"),
        folder("r2", "r1", "Subs"),
        video,
        subtitle,
        stranger,
        remoteFile("f3", "c", "Single.mkv", 10, "dl_2")
      ])
      yield* tables.update(id, ["sent"], { status: "completed", serviceCompletedAt: 6, progress: 1 }, 6)
      yield* landed(root, "tv/Show.S01E01/Show.S01E01.mkv", video)
      const item = (yield* intake.list({ ids: [id] }))[0]
      assert.strictEqual(item?.state, "mirroring")
      assert.strictEqual(item?.size, 100)
      assert.strictEqual(item?.progress, 0.5 + 0.5 * 0.9)
      assert.strictEqual(item?.contentPath, `${root}/tv/Show.S01E01`)
      assert.deepStrictEqual(
        item?.files.map((f) => [f.name, f.localBytes]),
        [
          ["Show.S01E01/Show.S01E01.mkv", 90],
          ["Show.S01E01/Subs/en.srt", 0]
        ]
      )
      yield* tables.update(single.id, ["sent"], { serviceCompletedAt: 6 }, 6)
      const one = (yield* intake.list({ ids: [single.id] }))[0]
      assert.strictEqual(one?.contentPath, `${root}/tv/Single.mkv`)
      assert.strictEqual(one?.savePath, `${root}/tv`)
    }).pipe(Effect.provide(intakeOverStore(root)))
  })
})
