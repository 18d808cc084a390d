import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { blackholeLayer, makeBlackhole } from "../../src/blackhole/Blackhole.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { bencode } from "../intake/bencode.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"
import { listing, MAGNET, NZB, setup, tempWatch, write } from "./support.ts"

describe("blackhole folder", () => {
  it.effect("a growing file is taken only once it has kept its size for the settle time, whole", () =>
    Effect.gen(function* () {
      const { watch, memory, blackhole } = yield* setup()
      write(watch, "Show.S01E01.nzb", NZB.slice(0, 20))
      assert.deepStrictEqual(yield* blackhole.sweep, [], "first seen")
      yield* TestClock.adjust("2 seconds")
      Fs.appendFileSync(NodePath.join(watch, "Show.S01E01.nzb"), NZB.slice(20))
      assert.deepStrictEqual(yield* blackhole.sweep, [], "still growing")
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(yield* blackhole.sweep, [], "stable for 2 s only")
      yield* TestClock.adjust("1 second")
      const taken = yield* blackhole.sweep
      assert.deepStrictEqual(taken, [
        {
          file: "Show.S01E01.nzb",
          outcome: "processed",
          movedTo: NodePath.join(watch, "processed", "Show.S01E01.nzb"),
          reason: null
        }
      ])
      const [added] = yield* memory.added
      assert.strictEqual(added?.source._tag, "NzbFile")
      if (added?.source._tag === "NzbFile") {
        assert.strictEqual(new TextDecoder().decode(added.source.content), NZB, "the whole file, not the first chunk")
      }
      assert.deepStrictEqual(added?.options, { category: "", via: "blackhole" })
      assert.deepStrictEqual(listing(watch), ["failed", "processed"])
    })
  )

  it.effect("each kind: .torrent, .magnet, .nzb, .url (also a shortcut) and .txt; a sub-folder is the category", () =>
    Effect.gen(function* () {
      const { watch, memory, settled } = yield* setup()
      write(
        watch,
        "tv/Show.torrent",
        bencode({ info: { name: "Show", length: 1, "piece length": 16384, pieces: Buffer.alloc(20) } })
      )
      write(watch, "tv/Show.magnet", `${MAGNET}\n`)
      write(watch, "movies/Film.nzb", NZB)
      write(watch, "link.url", "[InternetShortcut]\r\nURL=https://indexer.example/get/1.torrent\r\n")
      write(watch, "movies/other.txt", "  https://indexer.example/get/2.nzb  \n")
      write(watch, "notes.md", "left alone")
      write(watch, ".partial.nzb", NZB)
      const taken = yield* settled
      assert.strictEqual(taken.length, 5)
      assert.isTrue(taken.every((t) => t.outcome === "processed"))
      const added = (yield* memory.added).map((a) => [a.source._tag, a.options.category]).sort()
      assert.deepStrictEqual(added, [
        ["Magnet", "tv"],
        ["NzbFile", "movies"],
        ["TorrentFile", "tv"],
        ["Url", ""],
        ["Url", "movies"]
      ])
      assert.deepStrictEqual(listing(NodePath.join(watch, "processed")), [
        "Film.nzb",
        "Show.magnet",
        "Show.torrent",
        "link.url",
        "other.txt"
      ])
      assert.deepStrictEqual(listing(watch), [".partial.nzb", "failed", "movies", "notes.md", "processed", "tv"])
    })
  )

  it.effect("a file the intake refuses goes to failed/ with a one-line reason; a taken name gets a number", () =>
    Effect.gen(function* () {
      const { watch, settled } = yield* setup()
      write(watch, "two.txt", "https://a.example/1\nhttps://a.example/2\n")
      write(watch, "junk.nzb", "not an nzb")
      write(watch, "processed/Show.nzb", "an earlier one")
      write(watch, "Show.nzb", NZB)
      const taken = yield* settled
      const byFile = new Map(taken.map((t) => [t.file, t]))
      assert.strictEqual(byFile.get("Show.nzb")?.movedTo, NodePath.join(watch, "processed", "Show (2).nzb"))
      assert.strictEqual(Fs.readFileSync(NodePath.join(watch, "processed", "Show.nzb"), "utf8"), "an earlier one")
      const failed = NodePath.join(watch, "failed")
      assert.deepStrictEqual(listing(failed), ["junk.nzb", "junk.nzb.reason.txt", "two.txt", "two.txt.reason.txt"])
      assert.strictEqual(
        Fs.readFileSync(NodePath.join(failed, "two.txt.reason.txt"), "utf8"),
        "the file holds more than one line; put one URL or magnet in each file\n"
      )
      assert.strictEqual(
        Fs.readFileSync(NodePath.join(failed, "junk.nzb.reason.txt"), "utf8"),
        "junk.nzb: not an NZB file (no <nzb> element)\n"
      )
    })
  )

  it.effect("hostile names: a newline in a file name, a category folder with a control character, '..' in names", () =>
    Effect.gen(function* () {
      const { watch, memory, settled } = yield* setup()
      write(watch, "evil\nname.nzb", NZB)
      write(watch, "bad\ncat/Show.nzb", NZB.replace("s", "t"))
      write(watch, "..nzb", NZB.replace("s", "u"))
      write(watch, "a..b.magnet", MAGNET)
      const taken = yield* settled
      assert.strictEqual(taken.length, 3)
      assert.deepStrictEqual(listing(NodePath.join(watch, "processed")), ["a..b.magnet", "evil\nname.nzb"])
      assert.isTrue(Fs.existsSync(NodePath.join(watch, "..nzb")), "a hidden name is left alone")
      const reason = Fs.readFileSync(NodePath.join(watch, "failed", "Show.nzb.reason.txt"), "utf8")
      assert.strictEqual(reason.split("\n").length, 2, "one line and its end")
      assert.match(reason, /holds control characters/)
      assert.isFalse((yield* memory.added).some((a) => a.options.category.includes("\n")))
    })
  )

  it.effect("files already there at start are taken; on a restart processed/ and failed/ are not read again", () =>
    Effect.gen(function* () {
      const watch = yield* tempWatch
      write(watch, "tv/Early.nzb", NZB)
      write(watch, "processed/Old.nzb", NZB.replace("s", "v"))
      write(watch, "failed/Old.txt", "garbage")
      const memory = makeMemoryIntake("/srv/dlsync")
      const start = makeBlackhole({ watch }).pipe(Effect.provideService(Intake, memory.intake))
      const first = yield* start
      yield* first.sweep
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(
        (yield* first.sweep).map((t) => t.file),
        [NodePath.join("tv", "Early.nzb")]
      )
      // A restart: a new sweeper over the same folder takes nothing more.
      write(watch, "Late.nzb", NZB.replace("s", "w"))
      const second = yield* start
      yield* second.sweep
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(
        (yield* second.sweep).map((t) => t.file),
        ["Late.nzb"]
      )
      assert.strictEqual((yield* memory.added).length, 2)
    })
  )

  it.effect("a watch folder that cannot be used fails with one line naming blackhole.watch", () =>
    Effect.gen(function* () {
      const dir = yield* tempWatch
      const file = NodePath.join(dir, "a-file")
      Fs.writeFileSync(file, "")
      const memory = makeMemoryIntake("/srv/dlsync")
      const error = yield* Effect.flip(
        Layer.build(blackholeLayer(file).pipe(Layer.provide(Layer.succeed(Intake, memory.intake))))
      )
      assert.strictEqual(error._tag, "BlackholeError")
      assert.match(
        error.message,
        /^cannot use .*a-file \(blackhole\.watch\): .*; create it, make it writable for dlsync, or remove the key$/
      )
      assert.notInclude(error.message, "\n")
    })
  )

  it.live("the daemon's layer takes a dropped file on its own (chokidar wakes it)", () =>
    Effect.gen(function* () {
      const watch = yield* tempWatch
      const memory = makeMemoryIntake("/srv/dlsync")
      yield* Layer.build(blackholeLayer(watch, "50 millis").pipe(Layer.provide(Layer.succeed(Intake, memory.intake))))
      write(watch, "tv/Dropped.nzb", NZB)
      const processed = NodePath.join(watch, "processed", "Dropped.nzb")
      yield* Effect.suspend(() => (Fs.existsSync(processed) ? Effect.void : Effect.fail("not yet"))).pipe(
        Effect.retry({ schedule: Schedule.spaced("50 millis") })
      )
      assert.deepStrictEqual(
        (yield* memory.added).map((a) => a.options.category),
        ["tv"]
      )
    })
  )
})
