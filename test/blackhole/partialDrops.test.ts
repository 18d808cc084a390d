/**
 * Files the blackhole must not take as they are: one too large is refused by its size alone
 * (a sparse 2 GB file is never read), and one that does not parse whole (a writer pausing
 * longer than the settle time: a torrent whose dictionary is not closed, an NZB without its
 * `</nzb>`, a magnet cut short) waits, is taken whole once completed, and goes to failed/
 * with a reason when it stays incomplete past the bound. Real files; the test clock.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { MAX_DROP_BYTES, PARTIAL_WAIT } from "../../src/blackhole/Blackhole.ts"
import { bencode } from "../intake/bencode.ts"
import { HASH, listing, MAGNET, NZB, setup, write } from "./support.ts"

const TORRENT = bencode({
  announce: "http://tracker.example/announce",
  info: { name: "Show.S01", length: 1000, "piece length": 16384, pieces: Buffer.alloc(20, 7) }
})

describe("blackhole: files too large or not whole", () => {
  it.effect("a sparse file of 2 GB is refused by its size, never read", () =>
    Effect.gen(function* () {
      const { watch, memory, settled } = yield* setup()
      const big = NodePath.join(watch, "Huge.nzb")
      Fs.writeFileSync(big, "")
      Fs.truncateSync(big, 2 * 1024 ** 3)
      const rssBefore = process.memoryUsage().rss
      const taken = yield* settled
      assert.deepStrictEqual(
        taken.map((t) => [t.file, t.outcome, t.reason]),
        [["Huge.nzb", "failed", `larger than ${MAX_DROP_BYTES / 1024 / 1024} MiB`]]
      )
      assert.isBelow(process.memoryUsage().rss - rssBefore, 256 * 1024 * 1024, "the file was not read into memory")
      assert.deepStrictEqual(yield* memory.added, [])
      assert.deepStrictEqual(listing(NodePath.join(watch, "failed")), ["Huge.nzb", "Huge.nzb.reason.txt"])
    })
  )

  for (const [kind, name, whole, cut] of [
    ["an NZB without its </nzb>", "Show.nzb", NZB, NZB.slice(0, NZB.indexOf("</nzb>") + 3)],
    ["a torrent whose dictionary is not closed", "Show.torrent", TORRENT, TORRENT.subarray(0, TORRENT.length - 1)],
    ["a magnet cut inside its info-hash", "Show.magnet", MAGNET, MAGNET.slice(0, 30)]
  ] as const) {
    it.effect(`${kind}, its writer pausing longer than the settle time, waits and is taken whole`, () =>
      Effect.gen(function* () {
        const { watch, memory, blackhole, settled } = yield* setup()
        write(watch, name, cut)
        assert.deepStrictEqual(yield* settled, [], "settled, but not whole")
        yield* TestClock.adjust("30 seconds")
        assert.deepStrictEqual(yield* blackhole.sweep, [], "still waiting")
        assert.strictEqual(yield* blackhole.waiting, 1)
        write(watch, name, whole)
        const taken = yield* settled
        assert.deepStrictEqual(
          taken.map((t) => [t.file, t.outcome]),
          [[name, "processed"]]
        )
        const [added] = yield* memory.added
        const content =
          added?.source._tag === "Magnet"
            ? Buffer.from(added.source.uri)
            : added?.source._tag === "NzbFile" || added?.source._tag === "TorrentFile"
              ? Buffer.from(added.source.content)
              : Buffer.alloc(0)
        assert.isTrue(content.equals(Buffer.from(whole)), "the whole file was sent")
      })
    )

    it.effect(`${kind}, never completed, goes to failed/ with a reason after the bound`, () =>
      Effect.gen(function* () {
        const { watch, memory, blackhole, settled } = yield* setup()
        write(watch, name, cut)
        assert.deepStrictEqual(yield* settled, [])
        yield* TestClock.adjust(PARTIAL_WAIT)
        const taken = yield* blackhole.sweep
        assert.deepStrictEqual(
          taken.map((t) => [t.file, t.outcome]),
          [[name, "failed"]]
        )
        assert.match(taken[0]?.reason ?? "", /incomplete/)
        assert.deepStrictEqual(yield* memory.added, [], "nothing truncated was sent")
        const reason = Fs.readFileSync(NodePath.join(watch, "failed", `${name}.reason.txt`), "utf8")
        assert.match(reason, /incomplete/)
      })
    )
  }

  it.effect("a magnet written without a line end, as Sonarr writes it, is whole", () =>
    Effect.gen(function* () {
      const { watch, settled } = yield* setup()
      write(watch, "Show.magnet", `magnet:?xt=urn:btih:${HASH}`)
      assert.deepStrictEqual(
        (yield* settled).map((t) => t.outcome),
        ["processed"]
      )
    })
  )
})
