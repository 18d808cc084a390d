/**
 * `dlsync run --once` against the emulator: the first mirror and every kind of remote
 * change, each checked against the emulator's own tree and bytes.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { contentMismatches, expectedTree, type Sandbox, sandbox, seedSmallLibrary, snapshot } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("run --once", { timeout: 120_000 }, () => {
  it("mirrors the account on the first run and exits 0", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    assert.isTrue(Fs.existsSync(Path.join(box.root, ".dlsync", "marker")), "root marker written")

    // `dlsync --once` is the same command; an idle pass changes nothing.
    const again = await box.run(["--once"])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
  })

  it("mirrors rename, move, delete, add and edit; a rename keeps the file (same inode)", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const id = (p: string) => ids.get(p) ?? assert.fail(`no ${p}`)
    const inodeBefore = Fs.statSync(Path.join(box.root, "Movies/alpha.mkv")).ino
    const folderInode = Fs.statSync(Path.join(box.root, "TV/Season 1")).ino

    box.emu.control.rename(id("Movies/alpha.mkv"), "alpha (2001).mkv")
    box.emu.control.move(id("TV/Season 1"), id("Movies"))
    box.emu.control.remove([id("Movies/beta.en.srt")])
    box.emu.control.addFile({ name: "gamma.mkv", parentId: id("Movies"), sizeBytes: 12_345 })
    box.emu.control.edit(id("TV/notes.txt"), { sizeBytes: 4_000 })

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    assert.strictEqual(Fs.statSync(Path.join(box.root, "Movies/alpha (2001).mkv")).ino, inodeBefore)
    assert.strictEqual(
      Fs.statSync(Path.join(box.root, "Movies/Season 1")).ino,
      folderInode,
      "a folder move is one rename"
    )
    const trash = snapshot(Path.join(box.root, ".dlsync", "trash"))
    assert.isTrue(
      Object.keys(trash).some((p) => p.endsWith("Movies/beta.en.srt")),
      `deleted file is in the trash: ${JSON.stringify(trash)}`
    )
  })

  it("a file dlsync did not write is never touched, even when its folder is deleted remotely", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    Fs.writeFileSync(Path.join(box.root, "mine.txt"), "my own")
    Fs.writeFileSync(Path.join(box.root, "TV/Season 1/my-notes.txt"), "mine too")
    box.emu.control.remove([ids.get("TV") ?? ""])

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(Fs.readFileSync(Path.join(box.root, "mine.txt"), "utf8"), "my own")
    assert.strictEqual(Fs.readFileSync(Path.join(box.root, "TV/Season 1/my-notes.txt"), "utf8"), "mine too")
    assert.isFalse(Fs.existsSync(Path.join(box.root, "TV/Season 1/e01.mkv")), "our files in it are removed")
    assert.isFalse(Fs.existsSync(Path.join(box.root, "TV/notes.txt")))
  })

  it("keeps a file the user edited as a conflict copy before a remote update lands", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const local = Path.join(box.root, "readme.txt")
    Fs.writeFileSync(local, "the user's own edit")
    box.emu.control.edit(ids.get("readme.txt") ?? "", { sizeBytes: 500 })

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    const copies = Fs.readdirSync(box.root).filter((n) => n.startsWith("readme.conflict-"))
    assert.strictEqual(copies.length, 1, Fs.readdirSync(box.root).join(", "))
    assert.strictEqual(Fs.readFileSync(Path.join(box.root, copies[0] ?? ""), "utf8"), "the user's own edit")
  })

  it("respects a local deletion, shows it in status, and `restore` brings it back", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    Fs.rmSync(Path.join(box.root, "Movies/beta.mkv"))

    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    assert.isFalse(Fs.existsSync(Path.join(box.root, "Movies/beta.mkv")), "not fetched again")
    const status = JSON.parse((await box.run(["status", "--json"])).stdout)
    assert.deepStrictEqual(status.locallyDeleted, ["Movies/beta.mkv"])

    const restore = await box.run(["restore", "Movies/beta.mkv"])
    assert.strictEqual(restore.code, 0, restore.stderr)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    assert.strictEqual((await box.run(["restore", "Movies/beta.mkv"])).code, 64, "nothing left to restore")
  })

  it("after the whole mirror is emptied (marker kept), `restore .` brings everything back at once", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    for (const name of Fs.readdirSync(box.root)) {
      if (name !== ".dlsync") Fs.rmSync(Path.join(box.root, name), { recursive: true })
    }
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const status = JSON.parse((await box.run(["status", "--json"])).stdout)
    assert.isAbove(status.locallyDeleted.length, 3)

    const restore = await box.run(["restore", "."])
    assert.strictEqual(restore.code, 0, restore.stderr)
    assert.match(restore.stdout, /^restored \d+ item\(s\) at the mirror root/)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    assert.strictEqual((await box.run(["restore", "/"])).code, 64, "nothing left to restore")
  })

  it("a lost store rebuilds adopt-only: matching files are adopted, others kept as conflicts, nothing deleted", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    Fs.rmSync(box.stateDir, { recursive: true })
    Fs.writeFileSync(Path.join(box.root, "readme.txt"), "changed while the store was lost")
    Fs.writeFileSync(Path.join(box.root, "Movies/mine.txt"), "the user's")
    box.emu.control.clearRequests()

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    const fetched = box.emu.control.requests({ origin: "cdn" })
    assert.deepStrictEqual(
      [...new Set(fetched.map((r) => decodeURIComponent(r.path.split("?")[0]?.split("/").at(-1) ?? "")))],
      ["readme.txt"],
      "only the file that differs is fetched"
    )
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    assert.strictEqual(Fs.readFileSync(Path.join(box.root, "Movies/mine.txt"), "utf8"), "the user's")
    const copies = Fs.readdirSync(box.root).filter((n) => n.startsWith("readme.conflict-"))
    assert.strictEqual(copies.length, 1)
  })

  it("a lost store does not adopt a file overwritten with as many bytes: kept as a conflict copy, the remote fetched", async () => {
    box = await sandbox()
    seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    for (const suffix of ["", "-wal", "-shm"]) Fs.rmSync(Path.join(box.stateDir, `state.db${suffix}`), { force: true })
    const mine = Buffer.alloc(40_000, "m")
    Fs.writeFileSync(Path.join(box.root, "Movies/alpha.mkv"), mine)

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [], result.stderr + result.stdout)
    const copies = Fs.readdirSync(Path.join(box.root, "Movies")).filter((n) => n.startsWith("alpha.conflict-"))
    assert.strictEqual(copies.length, 1, Fs.readdirSync(Path.join(box.root, "Movies")).join(", "))
    assert.isTrue(Fs.readFileSync(Path.join(box.root, "Movies", copies[0] ?? "")).equals(mine), "the user's bytes")
  })

  it("a remote deletion inside a folder replaced by a symlink waits, and is applied once the folder is back", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    assert.strictEqual((await box.run(["run", "--once"])).code, 0)
    const season = Path.join(box.root, "TV/Season 1")
    const away = Path.join(box.dir, "season-away")
    Fs.renameSync(season, away)
    Fs.symlinkSync(away, season)
    box.emu.control.remove([ids.get("TV/Season 1/e01.mkv") ?? ""])

    const blocked = await box.run(["run", "--once"])
    assert.strictEqual(blocked.code, 1, "the folder left alone is listed as not mirrored")
    assert.match(
      blocked.stderr,
      /TV\/Season 1\/e01\.mkv: deleted on the remote; waits until TV\/Season 1 is a folder again/
    )
    assert.isTrue(Fs.existsSync(Path.join(away, "e01.mkv")), "nothing is done through the symlink")

    Fs.rmSync(season)
    Fs.renameSync(away, season)
    const back = await box.run(["run", "--once"])
    assert.strictEqual(back.code, 0, back.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    const trash = snapshot(Path.join(box.root, ".dlsync", "trash"))
    assert.isTrue(
      Object.keys(trash).some((p) => p.endsWith("TV/Season 1/e01.mkv")),
      `the deleted file is in the trash: ${JSON.stringify(trash)}`
    )
  })

  it("sanitizes hostile names: nothing is written outside the root", async () => {
    box = await sandbox()
    const folder = box.emu.control.addFolder({ name: "..", parentId: null })
    for (const name of ["../escape.txt", "a/b", "/abs.txt", "CON", "trail. ", "x\u0000y", "\\..\\win.txt"]) {
      box.emu.control.addFile({ name, parentId: folder.id, sizeBytes: 10 })
    }
    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    // box.dir is also dlsync's HOME (the tests keep V8's code cache elsewhere: XDG_CACHE_HOME).
    assert.deepStrictEqual(Fs.readdirSync(box.dir).sort(), ["root", "state"], "nothing new next to the root")
    const tree = snapshot(box.root)
    assert.strictEqual(Object.values(tree).filter((e) => e.type === "file").length, 7, JSON.stringify(tree))
    for (const path of Object.keys(tree)) {
      assert.isFalse(
        path.split("/").some((c) => c === ".." || c === "." || c === ""),
        path
      )
    }
  })

  it("mirrors by listing with a personal API key, and sees deletions", async () => {
    box = await sandbox()
    const ids = seedSmallLibrary(box.emu)
    const first = await box.run(["run", "--once"], { apiKey: true })
    assert.strictEqual(first.code, 0, first.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    // The documented mode of an API key: said at info level, no warning.
    const warnings = first.stderr.split("\n").filter((line) => /"level":"(warn|error)"/.test(line))
    assert.deepStrictEqual(warnings, [])
    assert.match(
      first.stderr,
      /"level":"info","message":"the change feed refused the credential \(403\); mirroring by listing/
    )
    box.emu.control.remove([ids.get("Movies/alpha.mkv") ?? ""])
    box.emu.control.rename(ids.get("readme.txt") ?? "", "README.md")

    const second = await box.run(["run", "--once"], { apiKey: true })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    const status = JSON.parse((await box.run(["status", "--json"], { apiKey: true })).stdout)
    assert.strictEqual(status.mode.name, "listing")
    assert.match(status.mode.reason, /refused the credential/)
    assert.isFalse(
      box.emu.control.requests().some((r) => r.path.startsWith("/api/v1/files/changes") && r.status === 200),
      "the change feed never answered the API key"
    )
  })
})
