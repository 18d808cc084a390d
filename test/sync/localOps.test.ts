import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { LocalStat } from "../../src/domain/LocalEntry.ts"
import { detectCaseInsensitive } from "../../src/sync/caseSensitivity.ts"
import { LocalOps, land, MARKER, toLocalStat } from "../../src/sync/localOps.ts"
import { compareWithStore, scanLocal } from "../../src/sync/localScan.ts"
import { entryOf, file } from "./fixtures.ts"

const tmp = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-root-"))

const withOps = <A, E>(root: string, f: (ops: LocalOps["Service"]) => Effect.Effect<A, E>) =>
  LocalOps.use(f).pipe(Effect.provide(LocalOps.layer(root), { local: true }))

const write = (root: string, rel: string, text: string): LocalStat => {
  const full = Path.join(root, rel)
  Fs.mkdirSync(Path.dirname(full), { recursive: true })
  Fs.writeFileSync(full, text)
  return toLocalStat(Fs.lstatSync(full, { bigint: true }))
}

describe("LocalOps", () => {
  it.effect("refuses any path that is not a clean relative path inside the root", () =>
    Effect.gen(function* () {
      const root = tmp()
      for (const bad of ["../escape", "a/../../b", "/etc/passwd", "a//b", "./a", "a/.", "", "a\0b"]) {
        const error = yield* Effect.flip(withOps(root, (ops) => ops.mkdirp(bad)))
        assert.strictEqual(error.reason, "outside_root", bad)
      }
      assert.deepStrictEqual(Fs.readdirSync(root), [])
    })
  )

  it.effect("takes names that merely start with two dots as the single components they are", () =>
    Effect.gen(function* () {
      const root = tmp()
      for (const name of ["..hidden", "...txt", ".._x", "a/..b"]) {
        yield* withOps(root, (ops) => ops.mkdirp(name))
        assert.isTrue(Fs.statSync(Path.join(root, name)).isDirectory(), name)
      }
      const stat = write(root, "..f", "x")
      yield* withOps(root, (ops) => ops.rename("..f", "...g", stat))
      assert.deepStrictEqual(Fs.readdirSync(root).sort(), ["...g", "...txt", ".._x", "..hidden", "a"])
    })
  )

  it.effect("never writes through a symlink inside the root", () =>
    Effect.gen(function* () {
      const root = tmp()
      const outside = tmp()
      Fs.symlinkSync(outside, Path.join(root, "Movies"))
      const stat = write(root, "film.mkv", "abc")
      const mkdir = yield* Effect.flip(withOps(root, (ops) => ops.mkdirp("Movies/Sub")))
      assert.strictEqual(mkdir.reason, "symlink")
      const move = yield* Effect.flip(withOps(root, (ops) => ops.rename("film.mkv", "Movies/film.mkv", stat)))
      assert.strictEqual(move.reason, "symlink")
      Fs.mkdirSync(Path.join(root, ".dlsync", "partial"), { recursive: true })
      Fs.writeFileSync(Path.join(root, ".dlsync", "partial", "p"), "data")
      const landing = yield* Effect.flip(land(root, Path.join(root, ".dlsync/partial/p"), "Movies/x", null))
      assert.strictEqual(landing.reason, "symlink")
      assert.deepStrictEqual(Fs.readdirSync(outside), [], "nothing written outside the root")
      assert.isTrue(Fs.existsSync(Path.join(root, "film.mkv")))
    })
  )

  it.effect("renames only what still matches, and never over an existing path", () =>
    Effect.gen(function* () {
      const root = tmp()
      const a = write(root, "a.mkv", "aaa")
      write(root, "b.mkv", "bbb")
      const exists = yield* Effect.flip(withOps(root, (ops) => ops.rename("a.mkv", "b.mkv", a)))
      assert.strictEqual(exists.reason, "exists")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "b.mkv"), "utf8"), "bbb")
      Fs.writeFileSync(Path.join(root, "a.mkv"), "user edit")
      const changed = yield* Effect.flip(withOps(root, (ops) => ops.rename("a.mkv", "c.mkv", a)))
      assert.strictEqual(changed.reason, "changed")
      assert.strictEqual(Fs.readFileSync(Path.join(root, "a.mkv"), "utf8"), "user edit")
      const fresh = toLocalStat(Fs.lstatSync(Path.join(root, "a.mkv"), { bigint: true }))
      yield* withOps(root, (ops) => ops.rename("a.mkv", "c.mkv", fresh))
      assert.strictEqual(Fs.readFileSync(Path.join(root, "c.mkv"), "utf8"), "user edit")
      assert.isFalse(Fs.existsSync(Path.join(root, "a.mkv")))
    })
  )

  it.effect("moves a folder in one rename", () =>
    Effect.gen(function* () {
      const root = tmp()
      write(root, "A/x/y.mkv", "y")
      Fs.mkdirSync(Path.join(root, "B"))
      const a = toLocalStat(Fs.lstatSync(Path.join(root, "A"), { bigint: true }))
      yield* withOps(root, (ops) => ops.rename("A", "B/A2", a))
      assert.strictEqual(Fs.readFileSync(Path.join(root, "B/A2/x/y.mkv"), "utf8"), "y")
    })
  )

  it.effect("trashes into .dlsync/trash/<date>/, keeping earlier trashed copies, and purges old days", () =>
    Effect.gen(function* () {
      const root = tmp()
      const first = write(root, "M/f.mkv", "one")
      const to1 = yield* withOps(root, (ops) => ops.trash("M/f.mkv", first, "2026-11-22"))
      const second = write(root, "M/f.mkv", "two")
      const to2 = yield* withOps(root, (ops) => ops.trash("M/f.mkv", second, "2026-11-22"))
      assert.strictEqual(to1, ".dlsync/trash/2026-11-22/M/f.mkv")
      assert.strictEqual(to2, ".dlsync/trash/2026-11-22/M/f (2).mkv")
      assert.strictEqual(Fs.readFileSync(Path.join(root, to2), "utf8"), "two")
      write(root, ".dlsync/trash/2026-10-01/old.mkv", "old")
      const purged = yield* withOps(root, (ops) => ops.purgeTrash("2026-11-22", 30))
      assert.deepStrictEqual(purged, [".dlsync/trash/2026-10-01"])
      assert.isTrue(Fs.existsSync(Path.join(root, to1)))
    })
  )

  it.effect("deletes only a matching file, and removes a folder only when empty", () =>
    Effect.gen(function* () {
      const root = tmp()
      const f = write(root, "D/f", "x")
      const d = toLocalStat(Fs.lstatSync(Path.join(root, "D"), { bigint: true }))
      assert.isFalse(yield* withOps(root, (ops) => ops.removeFolderIfEmpty("D", d)))
      const stale = { ...f, mtimeNs: f.mtimeNs - 1n }
      assert.strictEqual((yield* Effect.flip(withOps(root, (ops) => ops.remove("D/f", stale)))).reason, "changed")
      yield* withOps(root, (ops) => ops.remove("D/f", f))
      assert.isTrue(yield* withOps(root, (ops) => ops.removeFolderIfEmpty("D", d)))
      assert.deepStrictEqual(Fs.readdirSync(root), [])
    })
  )

  it.effect("lands a download only where the plan expects, never over a file that appeared", () =>
    Effect.gen(function* () {
      const root = tmp()
      const partial = (name: string, text: string) => {
        const p = Path.join(root, ".dlsync", "partial", name)
        Fs.mkdirSync(Path.dirname(p), { recursive: true })
        Fs.writeFileSync(p, text)
        return p
      }
      const landed = yield* land(root, partial("1", "new"), "f.mkv", null)
      assert.strictEqual(landed.size, 3)
      const again = yield* Effect.flip(land(root, partial("2", "other"), "f.mkv", null))
      assert.strictEqual(again.reason, "exists")
      const replaced = yield* land(root, partial("3", "v2!"), "f.mkv", landed)
      assert.strictEqual(Fs.readFileSync(Path.join(root, "f.mkv"), "utf8"), "v2!")
      assert.notStrictEqual(replaced.ino, landed.ino)
      const notPartial = yield* Effect.flip(land(root, "/etc/hostname", "g", null))
      assert.strictEqual(notPartial.reason, "outside_root")
      const outside = Path.join(tmp(), "outside")
      Fs.writeFileSync(outside, "not ours")
      // Built by hand: Path.join would take the dots away.
      const dotted = `${root}/.dlsync/partial/../../../${Path.basename(Path.dirname(outside))}/outside`
      const escaped = yield* Effect.flip(land(root, dotted, "h", null))
      assert.strictEqual(escaped.reason, "outside_root")
      assert.isTrue(Fs.existsSync(outside), "nothing taken from outside the partial folder")
    })
  )

  it.effect("tells a mirrored root from an empty mount point by its marker", () =>
    Effect.gen(function* () {
      const root = tmp()
      yield* withOps(root, (ops) => ops.checkRoot(false))
      assert.isTrue(Fs.existsSync(Path.join(root, MARKER)))
      yield* withOps(root, (ops) => ops.checkRoot(true))
      Fs.rmSync(Path.join(root, ".dlsync"), { recursive: true })
      const unmounted = yield* Effect.flip(withOps(root, (ops) => ops.checkRoot(true)))
      assert.strictEqual(unmounted._tag, "RootUnavailable")
      assert.strictEqual(unmounted._tag === "RootUnavailable" ? unmounted.reason : "", "unmounted")
      assert.include(unmounted.message, "looks unmounted")
      const missing = yield* Effect.flip(withOps(Path.join(root, "nope"), (ops) => ops.checkRoot(false)))
      assert.strictEqual(missing._tag === "RootUnavailable" ? missing.reason : "", "missing")
    })
  )

  it.effect("detects that this machine's temp dir is case-sensitive, leaving no probe behind", () =>
    Effect.gen(function* () {
      const root = tmp()
      const insensitive = yield* detectCaseInsensitive().pipe(Effect.provide(LocalOps.layer(root), { local: true }))
      assert.isFalse(insensitive)
      assert.deepStrictEqual(Fs.readdirSync(Path.join(root, ".dlsync")), [])
    })
  )
})

describe("scanLocal", () => {
  it.effect("leaves out what the user nested past PATH_MAX instead of failing the scan", () =>
    Effect.gen(function* () {
      const root = tmp()
      const name = "d".padEnd(180, "x")
      // Made with relative paths, as a user can: 25 levels of 181 bytes pass 4096.
      const nest = `process.chdir(process.argv[1]); for (let i = 0; i < 25; i++) { fs.mkdirSync(process.argv[2]); process.chdir(process.argv[2]) } fs.writeFileSync("f", "deep")`
      ChildProcess.execFileSync(process.execPath, ["-e", nest, root, name])
      write(root, "mine.txt", "user")
      const report = yield* scanLocal([]).pipe(Effect.provide(LocalOps.layer(root), { local: true }))
      ChildProcess.execFileSync("rm", ["-rf", root])
      const paths = [...report.disk.keys()]
      assert.include(paths, "mine.txt")
      assert.include(paths, name)
      assert.isTrue(paths.every((p) => Buffer.byteLength(Path.join(root, p)) < 4096))
      assert.isAbove(paths.length, 20)
    })
  )

  it.effect("reports changed, missing and unknown paths, leaving .dlsync out", () =>
    Effect.gen(function* () {
      const root = tmp()
      const kept = file("k", "kept.mkv", null, { size: 4 })
      const changed = file("c", "changed.mkv", null, { size: 4 })
      const gone = file("g", "gone.mkv", null, { size: 4 })
      const keptStat = write(root, "kept.mkv", "kept")
      const changedStat = write(root, "changed.mkv", "chan")
      write(root, "mine/notes.txt", "user")
      write(root, ".dlsync/marker", "")
      Fs.writeFileSync(Path.join(root, "changed.mkv"), "user!")
      const entries = [
        { ...entryOf(kept, "kept.mkv"), written: keptStat },
        { ...entryOf(changed, "changed.mkv"), written: changedStat },
        entryOf(gone, "gone.mkv")
      ]
      const report = yield* scanLocal(entries).pipe(Effect.provide(LocalOps.layer(root), { local: true }))
      assert.deepStrictEqual(
        report.changed.map((e) => e.path),
        ["changed.mkv"]
      )
      assert.deepStrictEqual(
        report.missing.map((e) => e.path),
        ["gone.mkv"]
      )
      assert.deepStrictEqual(report.unknown, ["mine", "mine/notes.txt"])
      assert.isFalse([...report.disk.keys()].some((p) => p.startsWith(".dlsync")))
      write(root, ".dlsync/moving/0123/x", "staged")
      const withStaged = yield* scanLocal(entries).pipe(Effect.provide(LocalOps.layer(root), { local: true }))
      assert.deepStrictEqual(
        [...withStaged.disk.keys()].filter((p) => p.startsWith(".dlsync")).sort(),
        [".dlsync/moving", ".dlsync/moving/0123", ".dlsync/moving/0123/x"],
        "items halfway through a swap are seen; the rest of .dlsync is not"
      )
      assert.deepStrictEqual(compareWithStore(entries, report.disk).unknown, report.unknown)
    })
  )
})
