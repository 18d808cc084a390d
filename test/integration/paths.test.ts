/**
 * `dlsync run --once` against names and depths the local file system limits: names that
 * start with two dots are ordinary names inside the root, and a tree deeper than PATH_MAX
 * gets its deepest names shortened (listed by `status`), renames of them staying renames.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { type Sandbox, sandbox, snapshot } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

interface StatusJson {
  readonly shortened: ReadonlyArray<{ readonly path: string; readonly remoteId: string; readonly name: string }>
}

/** A 180-byte folder name whose start tells its level. */
const levelName = (prefix: string) => prefix.padEnd(180, "x")

describe("run --once: names and depths the file system limits", { timeout: 120_000 }, () => {
  it("mirrors ..hidden, ...txt, ../x and 24 nested 180-byte folders inside the root; a shortened folder's rename stays a rename", async () => {
    box = await sandbox()
    const control = box.emu.control
    const hidden = control.addFolder({ name: "..hidden", parentId: null })
    control.addFile({ name: "...txt", parentId: hidden.id, sizeBytes: 10 })
    control.addFile({ name: "../x", parentId: null, sizeBytes: 11 })
    const chain: Array<string> = []
    for (let level = 1; level <= 24; level++) {
      chain.push(control.addFolder({ name: levelName(`level ${level} `), parentId: chain.at(-1) ?? null }).id)
    }
    control.addFile({ name: "bottom.mkv", parentId: chain.at(-1)!, sizeBytes: 1_234 })

    const first = await box.run(["run", "--once"])
    assert.strictEqual(first.code, 0, first.stderr)
    const disk = snapshot(box.root)
    assert.deepInclude(disk, { "..hidden": { type: "folder", size: 0 } })
    assert.deepInclude(disk, { "..hidden/...txt": { type: "file", size: 10 } })
    assert.deepInclude(disk, { ".._x": { type: "file", size: 11 } })
    const bottom = Object.keys(disk).filter((p) => p.endsWith("/bottom.mkv"))
    assert.strictEqual(bottom.length, 1, JSON.stringify(Object.keys(disk)))
    assert.strictEqual(bottom[0]!.split("/").length, 25, "every level is there")
    assert.strictEqual(disk[bottom[0]!]?.size, 1_234)
    for (const rel of Object.keys(disk)) {
      const full = Path.join(box.root, rel)
      assert.isTrue(full.startsWith(`${box.root}/`), `${rel} is inside the root`)
      assert.isBelow(Buffer.byteLength(full), 4096, rel)
    }

    const status = JSON.parse((await box.run(["status", "--json"])).stdout) as StatusJson
    const shortenedIds = status.shortened.map((s) => s.remoteId)
    assert.isAbove(shortenedIds.length, 0)
    // The deepest folders are the shortened ones, each still found on disk.
    assert.deepStrictEqual(shortenedIds, chain.slice(chain.length - shortenedIds.length))
    for (const s of status.shortened) {
      assert.isTrue(Fs.statSync(Path.join(box.root, s.path)).isDirectory(), s.path)
      assert.match(Path.basename(s.path), /^level \d+ x+ \[[0-9a-f]{6}\]$/)
      assert.strictEqual(s.name.length, 180)
    }
    const text = await box.run(["status"])
    assert.strictEqual(text.code, 0, text.stderr)
    assert.include(text.stdout, `shortened names (the full path would pass PATH_MAX) (${shortenedIds.length}):`)
    assert.include(text.stdout, status.shortened[0]!.path)

    // Renaming a shortened folder moves it: the file below keeps its inode, nothing is fetched.
    const inode = Fs.statSync(Path.join(box.root, bottom[0]!)).ino
    const renamed = shortenedIds[0]!
    control.rename(renamed, levelName("renamed "))
    const afterSeq = control.requests().at(-1)?.seq ?? 0
    const second = await box.run(["run", "--once"])
    assert.strictEqual(second.code, 0, second.stderr)
    const moved = Object.keys(snapshot(box.root)).filter((p) => p.endsWith("/bottom.mkv"))
    assert.strictEqual(moved.length, 1)
    assert.match(moved[0]!, /\/renamed x+ \[[0-9a-f]{6}\]\//)
    assert.strictEqual(Fs.statSync(Path.join(box.root, moved[0]!)).ino, inode, "a rename, not a new download")
    const fetched = control
      .requests({ afterSeq })
      .filter((r) => r.origin === "cdn" || r.path.includes("download-link"))
      .map((r) => r.path)
    assert.deepStrictEqual(fetched, [])
  })
})
