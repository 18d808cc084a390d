/**
 * The Intake contract (src/intake/Intake.ts) as test cases, for any implementation: each case
 * builds a fresh intake over a fresh mirror root and drives it through `Subject`, the least
 * control the cases need of the queue behind it (the service takes a release; the mirror lands
 * some or all of its files). intakeContract.test.ts runs them over IntakeLive and MemoryIntake.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, type Scope } from "effect"
import { IntakeId } from "../../src/domain/IntakeId.ts"
import type { Intake, IntakeError, IntakeItem, IntakeSource } from "../../src/intake/Intake.ts"
import { bencode } from "./bencode.ts"

export interface Subject {
  readonly intake: Intake["Service"]
  /** The mirror root (absolute, fresh) the intake's paths are under. */
  readonly root: string
  /** The service takes the release: it has a download id and fetches it. */
  readonly send: (id: IntakeId) => Effect.Effect<void>
  /**
   * The service completed the release and the mirror landed its files on local disk: every
   * one when `whole`, else all but one; then the queue settles what it can.
   */
  readonly mirror: (id: IntakeId, whole: boolean) => Effect.Effect<void>
}

/** Builds a fresh subject whose configuration names `configured` as categories. */
export type MakeSubject = (configured: ReadonlyArray<string>) => Effect.Effect<Subject, never, Scope.Scope>

const HEX = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
const magnet = (hash: string, name = "Show.S01E01"): IntakeSource => ({
  _tag: "Magnet",
  uri: `magnet:?xt=urn:btih:${hash}&dn=${name}`
})
const nzb = (fileName: string, segment = "a@b"): IntakeSource => ({
  _tag: "NzbFile",
  fileName,
  content: new TextEncoder().encode(`<nzb><file><segments><segment>${segment}</segment></segments></file></nzb>`)
})
const torrentInfo = (name: string, files?: ReadonlyArray<{ path: Array<string>; length: number }>) => ({
  name,
  "piece length": 16384,
  pieces: new Uint8Array(20),
  ...(files === undefined ? { length: 10 } : { files })
})
const torrent = (info: ReturnType<typeof torrentInfo>): IntakeSource => ({
  _tag: "TorrentFile",
  fileName: `${info.name}.torrent`,
  content: bencode({ info })
})
const qbit = { category: "tv", via: "qbittorrent" } as const

/** RFC 4648 base32 of a hex string (a magnet's other spelling of the info-hash). */
const base32 = (hex: string): string => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  const bits = [...Buffer.from(hex, "hex")].map((b) => b.toString(2).padStart(8, "0")).join("")
  return (bits.match(/.{5}/g) ?? []).map((chunk) => alphabet[Number.parseInt(chunk, 2)]).join("")
}

const one = (intake: Intake["Service"], id: IntakeId) =>
  Effect.map(intake.list({ ids: [id] }), (items) => items[0] ?? assert.fail(`${id} is not listed`))

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}${Path.sep}`)

/** The paths' promises: contentPath sits in savePath, under the root, and is neither savePath nor a category's folder. */
const assertPaths = (subject: Subject, item: IntakeItem, categoryFolders: ReadonlyArray<string>) => {
  assert.notStrictEqual(item.contentPath, item.savePath, `${item.name}: contentPath is not savePath`)
  assert.strictEqual(Path.dirname(item.contentPath), item.savePath, `${item.name}: contentPath is in savePath`)
  assert.isTrue(within(item.savePath, subject.root), `${item.name}: savePath is under the root`)
  assert.notInclude(
    [subject.root, ...categoryFolders],
    item.contentPath,
    `${item.name}: contentPath covers no category`
  )
}

const refusal = (effect: Effect.Effect<unknown, IntakeError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    assert.strictEqual(error.reason, "invalid")
    assert.notInclude(error.problem, "\n", "one line")
    return error.problem
  })

export const intakeContract = (name: string, make: MakeSubject) =>
  describe(`the Intake contract: ${name}`, () => {
    const scoped = (configured: ReadonlyArray<string>, body: (subject: Subject) => Effect.Effect<void, unknown>) =>
      Effect.scoped(Effect.flatMap(make(configured), body))

    it.effect(
      "the identity comes from the source: a magnet's btih in hex or base32, a .torrent's info-hash, an NZB's bytes",
      () =>
        scoped([], ({ intake }) =>
          Effect.gen(function* () {
            const hex = yield* intake.add(magnet(HEX), qbit)
            assert.strictEqual(hex.id, `btih:${HEX}`)
            assert.strictEqual(hex.name, "Show.S01E01")
            assert.deepStrictEqual(yield* intake.add(magnet(base32(HEX)), qbit), hex, "base32 is the same release")

            const info = torrentInfo("Movie.2024")
            const infoHash = createHash("sha1").update(bencode(info)).digest("hex")
            const file = yield* intake.add(torrent(info), qbit)
            assert.strictEqual(file.id, `btih:${infoHash}`)
            assert.strictEqual(file.name, "Movie.2024")
            assert.deepStrictEqual(
              yield* intake.add(magnet(infoHash, "Other"), qbit),
              file,
              "its magnet is the same release"
            )

            const sab = { category: "tv", via: "sabnzbd" } as const
            const first = yield* intake.add(nzb("Show.S01E02.nzb"), sab)
            const bytes = nzb("Show.S01E02.nzb")
            assert.strictEqual(
              first.id,
              `sha256:${createHash("sha256")
                .update(bytes._tag === "NzbFile" ? bytes.content : "")
                .digest("hex")}`
            )
            assert.strictEqual(first.name, "Show.S01E02")
            assert.strictEqual(
              (yield* intake.add(nzb("renamed.nzb"), sab)).id,
              first.id,
              "the bytes, not the file name"
            )
            assert.notStrictEqual((yield* intake.add(nzb("Show.S01E02.nzb", "c@d"), sab)).id, first.id)
            assert.lengthOf(yield* intake.list(), 4)
          })
        )
    )

    it.effect("adding a release already there returns its item as it is, whatever the new options", () =>
      scoped(["tv"], ({ intake, send }) =>
        Effect.gen(function* () {
          const first = yield* intake.add(magnet(HEX), qbit)
          assert.strictEqual(first.state, "queued")
          assert.deepStrictEqual(
            yield* intake.add(magnet(HEX), { category: "movies", via: "qbittorrent", paused: true, name: "X" }),
            first
          )
          yield* send(first.id)
          const sent = yield* one(intake, first.id)
          assert.isNotNull(sent.downloadId)
          const again = yield* intake.add(magnet(HEX), qbit)
          assert.strictEqual(again.downloadId, sent.downloadId, "never a second download for one release")
          assert.strictEqual(again.state, sent.state)
          assert.lengthOf(yield* intake.list(), 1)
        })
      )
    )

    it.effect("a source that cannot be read is refused as invalid, in one line, and nothing is recorded", () =>
      scoped([], ({ intake }) =>
        Effect.gen(function* () {
          const unreadable: ReadonlyArray<IntakeSource> = [
            { _tag: "Magnet", uri: "magnet:?dn=no-hash" },
            { _tag: "Magnet", uri: "https://example.org/not-a-magnet" },
            { _tag: "TorrentFile", fileName: "x.torrent", content: new TextEncoder().encode("not bencode") },
            { _tag: "NzbFile", fileName: "x.nzb", content: new TextEncoder().encode("<html></html>") },
            { _tag: "NzbFile", fileName: "empty.nzb", content: new Uint8Array(0) },
            { _tag: "Url", url: "ftp://example.org/x.torrent" }
          ]
          for (const source of unreadable) yield* refusal(intake.add(source, { category: "", via: "cli" }))
          assert.deepStrictEqual(yield* intake.list(), [])
        })
      )
    )

    it.effect("a release another surface added is refused, and stays that surface's", () =>
      scoped([], ({ intake }) =>
        Effect.gen(function* () {
          const item = yield* intake.add(magnet(HEX), qbit)
          yield* refusal(intake.add(magnet(HEX), { category: "tv", via: "sabnzbd" }))
          assert.deepStrictEqual(yield* intake.list({ via: "sabnzbd" }), [])
          assert.deepStrictEqual(yield* intake.list({ via: "qbittorrent" }), [item])
        })
      )
    )

    it.effect("list filters by surface, category and ids; without a filter it lists every release", () =>
      scoped([], ({ intake }) =>
        Effect.gen(function* () {
          const a = yield* intake.add(magnet(HEX), qbit)
          const b = yield* intake.add(magnet("a".repeat(40), "B"), { category: "movies", via: "qbittorrent" })
          const c = yield* intake.add(nzb("C.nzb"), { category: "tv", via: "sabnzbd" })
          const d = yield* intake.add(magnet("b".repeat(40), "D"), { category: "tv", via: "blackhole" })
          const e = yield* intake.add(magnet("c".repeat(40), "E"), { category: "", via: "cli" })
          const ids = (items: ReadonlyArray<IntakeItem>) => items.map((i) => i.id).sort()
          assert.deepStrictEqual(ids(yield* intake.list()), ids([a, b, c, d, e]))
          assert.deepStrictEqual(ids(yield* intake.list({ via: "qbittorrent" })), ids([a, b]))
          assert.deepStrictEqual(ids(yield* intake.list({ category: "tv" })), ids([a, c, d]))
          assert.deepStrictEqual(ids(yield* intake.list({ via: "qbittorrent", category: "tv" })), ids([a]))
          assert.deepStrictEqual(ids(yield* intake.list({ ids: [c.id, e.id] })), ids([c, e]))
          assert.deepStrictEqual(yield* intake.list({ ids: [] }), [])
        })
      )
    )

    it.effect(
      "categories: the configured ones plus those created through the surface; an add creates none; the one rule for names",
      () =>
        scoped(["tv"], ({ intake, root }) =>
          Effect.gen(function* () {
            const names = (via: "qbittorrent" | "sabnzbd") =>
              Effect.map(intake.categories(via), (list) => list.map((c) => c.name).sort())
            yield* intake.createCategory("qbittorrent", "music")
            yield* intake.createCategory("sabnzbd", "books")
            yield* intake.createCategory("qbittorrent", "")
            assert.deepStrictEqual(yield* names("qbittorrent"), ["music", "tv"])
            assert.deepStrictEqual(yield* names("sabnzbd"), ["books", "tv"])
            assert.deepStrictEqual(
              (yield* intake.categories("qbittorrent")).find((c) => c.name === "music")?.savePath,
              Path.join(root, "music")
            )
            for (const bad of ["../etc", "/abs", "a//b", "x\u0000y", "tv\\x"]) {
              yield* refusal(intake.createCategory("qbittorrent", bad))
              yield* refusal(intake.add(magnet(HEX), { category: bad, via: "qbittorrent" }))
            }
            assert.deepStrictEqual(yield* intake.list(), [])

            const anime = yield* intake.add(magnet(HEX), { category: "anime", via: "qbittorrent" })
            assert.strictEqual(anime.category, "anime")
            assert.strictEqual(anime.savePath, Path.join(root, "anime"))
            assert.deepStrictEqual(yield* names("qbittorrent"), ["music", "tv"], "an add creates no category")

            yield* intake.removeCategories("qbittorrent", ["music", "tv", "books"])
            assert.deepStrictEqual(yield* names("qbittorrent"), ["tv"], "configured categories stay")
            assert.deepStrictEqual(yield* names("sabnzbd"), ["books", "tv"], "another surface's category stays")
          })
        )
    )

    it.effect("a removal tombstones the identity: nothing reaches it until it is added again, fresh", () =>
      scoped([], ({ intake, send }) =>
        Effect.gen(function* () {
          const item = yield* intake.add(magnet(HEX), qbit)
          yield* send(item.id)
          yield* intake.remove([item.id], true)
          assert.deepStrictEqual(yield* intake.list(), [])
          assert.isTrue(Option.isNone(yield* intake.source(item.id)))
          yield* intake.remove([item.id], false)
          yield* intake.resume([item.id])
          yield* intake.pause([item.id])
          yield* intake.setCategory([item.id], "movies")
          assert.deepStrictEqual(yield* intake.list(), [], "nothing brings a removed release back")
          const revived = yield* intake.add(magnet(HEX), qbit)
          assert.strictEqual(revived.id, item.id)
          assert.strictEqual(revived.state, "queued")
          assert.strictEqual(revived.category, "tv")
          assert.isNull(revived.downloadId, "a new download, not the removed one's")
          assert.strictEqual(revived.progress, 0)
        })
      )
    )

    it.effect("source gives back what a live release was added with", () =>
      scoped([], ({ intake }) =>
        Effect.gen(function* () {
          const m = magnet(HEX)
          const n = nzb("Show.nzb")
          const a = yield* intake.add(m, qbit)
          const b = yield* intake.add(n, { category: "", via: "sabnzbd" })
          assert.deepStrictEqual(Option.getOrThrow(yield* intake.source(a.id)), m)
          const read = Option.getOrThrow(yield* intake.source(b.id))
          assert.strictEqual(read._tag, "NzbFile")
          if (read._tag === "NzbFile" && n._tag === "NzbFile") assert.deepStrictEqual([...read.content], [...n.content])
          assert.isTrue(Option.isNone(yield* intake.source(IntakeId.make(`btih:${"f".repeat(40)}`))))
        })
      )
    )

    it.effect(
      "contentPath sits in savePath and is never savePath nor a category's folder, before and after it is sent",
      () =>
        scoped(["tv"], (subject) =>
          Effect.gen(function* () {
            const { intake, send, root } = subject
            const folders = [Path.join(root, "tv"), Path.join(root, "movies")]
            const added = [
              yield* intake.add(magnet(HEX), qbit),
              yield* intake.add(magnet("a".repeat(40), "Root.Release"), { category: "", via: "cli" }),
              yield* intake.add(torrent(torrentInfo("Single.mkv")), qbit),
              yield* intake.add(
                torrent(
                  torrentInfo("Pack", [
                    { path: ["a.mkv"], length: 5 },
                    { path: ["Subs", "a.srt"], length: 1 }
                  ])
                ),
                qbit
              ),
              yield* intake.add(nzb("Show.S01E03.nzb"), { category: "tv", via: "sabnzbd" })
            ]
            for (const item of added) assertPaths(subject, item, folders)
            for (const item of added) yield* send(item.id)
            for (const item of yield* intake.list()) assertPaths(subject, item, folders)
          })
        )
    )

    it.effect("setCategory: a release not yet sent moves to the new category's folder; one sent is listed in it", () =>
      scoped(["tv", "movies"], (subject) =>
        Effect.gen(function* () {
          const { intake, send, root } = subject
          const unsent = yield* intake.add(magnet(HEX), qbit)
          const sent = yield* intake.add(magnet("a".repeat(40), "Sent.Release"), qbit)
          yield* send(sent.id)
          const before = yield* one(intake, sent.id)
          yield* intake.setCategory([unsent.id, sent.id], "movies")
          const kept = yield* one(intake, sent.id)
          assert.strictEqual(kept.category, "movies")
          assert.deepStrictEqual(
            [kept.savePath, kept.contentPath],
            [before.savePath, before.contentPath],
            "a sent release's files stay where they are"
          )
          const moved = yield* one(intake, unsent.id)
          assert.strictEqual(moved.category, "movies")
          assert.strictEqual(moved.savePath, Path.join(root, "movies"))
          assertPaths(subject, moved, [Path.join(root, "tv"), Path.join(root, "movies")])
          assert.deepStrictEqual(
            (yield* intake.list({ category: "movies" })).map((i) => i.id).sort(),
            [unsent.id, sent.id].sort()
          )
          assert.deepStrictEqual(yield* intake.list({ category: "tv" }), [])
          yield* refusal(intake.setCategory([unsent.id], "../x"))
          assert.strictEqual((yield* one(intake, unsent.id)).category, "movies")
        })
      )
    )

    it.effect("a release sent and then moved to another category completes where its files are", () =>
      scoped(["tv", "movies"], (subject) =>
        Effect.gen(function* () {
          const { intake, send, mirror } = subject
          const item = yield* intake.add(magnet(HEX), qbit)
          yield* send(item.id)
          const sent = yield* one(intake, item.id)
          yield* intake.setCategory([item.id], "movies")
          yield* mirror(item.id, true)
          const done = yield* one(intake, item.id)
          assert.deepStrictEqual([done.state, done.reason], ["completed", null])
          assert.strictEqual(done.category, "movies")
          assert.strictEqual(done.contentPath, sent.contentPath)
          assertPaths(subject, done, [Path.join(subject.root, "tv"), Path.join(subject.root, "movies")])
        })
      )
    )

    it.effect("pause and resume; a release added paused waits paused", () =>
      scoped([], ({ intake }) =>
        Effect.gen(function* () {
          const item = yield* intake.add(magnet(HEX), qbit)
          yield* intake.pause([item.id])
          assert.strictEqual((yield* one(intake, item.id)).state, "paused")
          yield* intake.resume([item.id])
          assert.strictEqual((yield* one(intake, item.id)).state, "queued")
          const paused = yield* intake.add(magnet("a".repeat(40), "P"), { ...qbit, paused: true })
          assert.strictEqual(paused.state, "paused")
          yield* refusal(intake.choose(item.id, "anything"))
        })
      )
    )

    it.effect("completed only when every file's bytes are on local disk under contentPath, which then stays put", () =>
      scoped(["tv", "movies"], (subject) =>
        Effect.gen(function* () {
          const { intake, send, mirror } = subject
          const item = yield* intake.add(magnet(HEX), qbit)
          yield* send(item.id)
          yield* mirror(item.id, false)
          const partly = yield* one(intake, item.id)
          assert.notStrictEqual(partly.state, "completed", "one file is not on disk yet")
          assert.isBelow(partly.progress, 1)
          assert.isNull(partly.completedAt)

          yield* mirror(item.id, true)
          const done = yield* one(intake, item.id)
          assert.strictEqual(done.state, "completed")
          assert.deepStrictEqual([done.progress, done.remaining, done.etaSeconds], [1, 0, 0])
          assert.isNotNull(done.completedAt)
          assert.isAbove(done.files.length, 0)
          for (const file of done.files) {
            const path = Path.join(done.savePath, ...file.name.split("/"))
            assert.isTrue(within(path, done.contentPath), `${file.name} is under contentPath`)
            assert.strictEqual(Fs.statSync(path).size, file.size, `${file.name} is whole on disk`)
            assert.strictEqual(file.localBytes, file.size)
          }
          assert.strictEqual(
            done.size,
            done.files.reduce((n, f) => n + f.size, 0)
          )
          assertPaths(subject, done, [Path.join(subject.root, "tv")])

          yield* intake.setCategory([item.id], "movies")
          yield* intake.pause([item.id])
          const after = yield* one(intake, item.id)
          assert.strictEqual(after.state, "completed", "pausing a completed release leaves it completed")
          assert.deepStrictEqual([after.savePath, after.contentPath], [done.savePath, done.contentPath])
        })
      )
    )
  })
