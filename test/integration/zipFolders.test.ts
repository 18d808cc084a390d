/**
 * Many small files of one folder come as ZIP archives (issue 38), through a real
 * `dlsync run --once` against the emulator's real archives.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { decodeToken } from "../../src/emulator/signedToken.ts"
import type { ZipEntry } from "../../src/emulator/zip.ts"
import { archive, craftedZips, localHeaderOf, memberOf } from "./craftedZips.ts"
import { contentMismatches, expectedTree, type Sandbox, sandbox, snapshot, waitUntil } from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

/** `count` files of `size` bytes in one folder; their ids in order. */
const seedFolder = (emu: RunningEmulator, name: string, count: number, size: number): Array<string> => {
  const folder = emu.control.addFolder({ name })
  return Array.from(
    { length: count },
    (_, i) =>
      emu.control.addFile({ name: `f${String(i).padStart(3, "0")}.bin`, parentId: folder.id, sizeBytes: size + i }).id
  )
}

/** The bytes the emulator serves for a file. */
const remoteBytes = (emu: RunningEmulator, id: string): Buffer => {
  const item = emu.control.item(id) ?? assert.fail(`no item ${id}`)
  const bytes = Buffer.alloc(item.sizeBytes)
  fillContent(contentKey(item.id, item.contentVersion), 0, bytes)
  return bytes
}

/** The requests of each kind the run made: ZIP links, the ids of each archive fetched, per-file links and GETs. */
const requests = (emu: RunningEmulator) => {
  const log = emu.control.requests()
  return {
    zipLinks: log.filter((r) => r.method === "POST" && r.path === "/api/v1/files/zip").length,
    archives: log
      .filter((r) => r.method === "GET" && r.path.startsWith("/zip/"))
      .map((r) => {
        const ids = decodeToken(emu.state, "zip", r.path.split("/")[2] ?? "")?.ids
        return Array.isArray(ids) ? ids.map(String) : []
      }),
    fileLinks: log.filter((r) => r.path.endsWith("/download-link")).length,
    fileGets: log.filter((r) => r.method === "GET" && r.path.startsWith("/dl/")).length
  }
}

describe("ZIP archives for folders of many small files", { timeout: 120_000 }, () => {
  for (const method of ["stored", "deflate"] as const) {
    it(`mirrors 250 small files of one folder from 3 ${method} archives, none fetched one by one`, async () => {
      const sand = await sandbox()
      box = sand
      sand.emu.control.setZip({ method })
      const ids = seedFolder(sand.emu, "Subs", 250, 3_000)
      sand.emu.control.addFile({ name: "alone.txt", sizeBytes: 10 })
      // A name with a backslash is a member named with "_" (the emulator's archive names);
      // two files whose archive names would be alike go one by one.
      const subs = sand.emu.control.item(ids[0] ?? "")?.parentId ?? null
      const special = ["back\\slash.srt", "x\\y.srt", "x_y.srt"].map(
        (name, i) => sand.emu.control.addFile({ name, parentId: subs, sizeBytes: 70 + i }).id
      )
      ids.push(special[0] ?? "")
      const result = await box.run(["run", "--once"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.lengthOf(Object.keys(snapshot(box.root)), Object.keys(expectedTree(box.emu)).length)
      // The three land under the names the mirror gives them (a "\\" is not kept): each
      // whole somewhere in the folder; every other file at its remote path.
      const folder = Fs.readdirSync(Path.join(sand.root, "Subs")).map((name) =>
        Fs.readFileSync(Path.join(sand.root, "Subs", name))
      )
      for (const fileId of special)
        assert.isTrue(
          folder.some((bytes) => bytes.equals(remoteBytes(sand.emu, fileId))),
          fileId
        )
      assert.deepStrictEqual(
        contentMismatches(box.emu, box.root).filter((p) => !/(slash|x.y)\.srt/.test(p)),
        []
      )
      const made = requests(box.emu)
      assert.strictEqual(made.zipLinks, 3, "251 files: 3 archives of at most 100")
      assert.sameMembers(made.archives.flat(), ids)
      assert.strictEqual(made.fileLinks, 3, "the file alone in the root and the two alike go one by one")
      assert.strictEqual(made.fileGets, 3)
      // Each file has the remote mtime, as any download.
      const item = box.emu.control.item(ids[7] ?? "") ?? assert.fail("no such item")
      const mtimeMs = Fs.statSync(Path.join(box.root, "Subs", item.name)).mtimeMs
      assert.closeTo(mtimeMs, item.contentModifiedAt / 1000, 1)
      assert.deepStrictEqual(Fs.readdirSync(Path.join(box.root, ".dlsync", "partial", ".zip")), [])

      const again = await box.run(["run", "--once"])
      assert.strictEqual(again.code, 0, again.stderr)
      assert.strictEqual(requests(box.emu).zipLinks, 3, "a second run fetches nothing")
    })
  }
})

describe("ZIP member faults: each fails alone and takes the per-file path", { timeout: 120_000 }, () => {
  it("missing, extra, hostile names, a second copy, oversized, a wrong CRC, encrypted, bzip2: the rest lands from the archive", async () => {
    box = await sandbox()
    const emu = box.emu
    const ids = seedFolder(emu, "Subs", 40, 2_000)
    const id = (i: number) => ids[i] ?? assert.fail(`no file ${i}`)
    const nameOf = (i: number) => emu.control.item(id(i))?.name ?? assert.fail(`no file ${i}`)
    // 0 missing, 1 oversized, 2 a wrong CRC, 3 encrypted, 4 bzip2; 5 comes twice, the second
    // copy with other bytes: the first lands, the second is an extra and changes nothing.
    const faulty = [0, 1, 2, 3, 4]
    const zips = await craftedZips(emu, async (asked) => {
      const entries = asked.flatMap((fileId) => {
        const i = ids.indexOf(fileId)
        if (i === 0) return [] // missing
        if (i === 1) return [memberOf(emu, fileId, { size: 2_001 + 5 })]
        if (i === 5) return [memberOf(emu, fileId), memberOf(emu, id(9), { name: nameOf(5), size: 2_005 })]
        return [memberOf(emu, fileId)]
      })
      const extras: Array<ZipEntry> = [
        "stranger.bin",
        "../escape.bin",
        "/abs.bin",
        "..\\win.bin",
        "nul\u0000.bin",
        "x".repeat(3_000)
      ].map((name) => ({ name, size: 3, modifiedMs: 0, read: async (_o, b) => void b.fill(1) }))
      const bytes = await archive([...extras.slice(0, 3), ...entries, ...extras.slice(3)])
      // A flipped byte (its CRC no longer matches), encryption and an unknown method.
      const flipped = localHeaderOf(bytes, nameOf(2)) + 30 + nameOf(2).length
      bytes.writeUInt8(bytes.readUInt8(flipped) ^ 0xff, flipped)
      const encrypted = localHeaderOf(bytes, nameOf(3))
      bytes.writeUInt16LE(bytes.readUInt16LE(encrypted + 6) | 1, encrypted + 6)
      bytes.writeUInt16LE(12, localHeaderOf(bytes, nameOf(4)) + 8)
      return { bytes }
    })
    try {
      const result = await box.run(["run", "--once"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.deepStrictEqual(snapshot(box.root), expectedTree(emu))
      assert.deepStrictEqual(contentMismatches(emu, box.root), [])
      assert.lengthOf(zips.asked, 1, "one archive: the faulty members failed alone")
      const gets = emu.control.requests().filter((r) => r.method === "GET" && r.path.startsWith("/dl/"))
      assert.sameMembers(
        gets.map((r) => r.path.split("/")[2]),
        faulty.map(id),
        "exactly the faulty members were fetched one by one"
      )
      assert.match(result.stderr, /files of a ZIP archive taken one by one/)
      assert.isFalse(Fs.existsSync(Path.join(box.dir, "escape.bin")))
      assert.isFalse(Fs.existsSync(Path.join(box.root, "stranger.bin")))
    } finally {
      await zips.close()
    }
  })
})

describe("ZIP layouts and interruptions", { timeout: 120_000 }, () => {
  for (const options of [
    { forceZip64: true, descriptorSignature: false },
    { forceZip64: true, method: "deflate" },
    { descriptor: false, method: "deflate" }
  ] as const) {
    it(`reads ${JSON.stringify(options)} archives`, async () => {
      box = await sandbox()
      const emu = box.emu
      seedFolder(emu, "Subs", 40, 5_000)
      const zips = await craftedZips(emu, async (asked) => ({
        bytes: await archive(
          asked.map((fileId) => memberOf(emu, fileId)),
          options
        )
      }))
      try {
        const result = await box.run(["run", "--once"])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.deepStrictEqual(contentMismatches(emu, box.root), [])
        assert.strictEqual(requests(emu).fileGets, 0, "every file from the archive")
      } finally {
        await zips.close()
      }
    })
  }

  it("an archive cut short: what landed stays, a new archive brings the rest", async () => {
    box = await sandbox()
    const ids = seedFolder(box.emu, "Subs", 150, 40_000)
    // Two archives (100 and 50 files) are asked for at once; either may be the one cut, so the
    // cut falls among the members of both (the smaller is 2 MB), never in its closing records.
    box.emu.control.addFault({ kind: "truncate", path: "/zip/**", count: 1, afterBytes: 1_500_000 })
    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    const made = requests(box.emu)
    assert.strictEqual(made.fileGets, 0)
    assert.sameMembers(
      made.archives.flat().filter((id, i, all) => all.indexOf(id) === i),
      ids
    )
    assert.isAbove(made.archives.length, 2, "the cut archive's rest was asked again")
  })

  it("SIGKILL in the middle of an archive: no torn file, landed files stay, the restart asks for the rest", async () => {
    box = await sandbox()
    const emu = box.emu
    const ids = seedFolder(emu, "Subs", 100, 3_000)
    // The first archive stops for good after 80 members (64 make one landing batch).
    let release = () => {}
    const never = new Promise<void>((resolve) => {
      release = resolve
    })
    const zips = await craftedZips(emu, async (asked, n) => {
      const bytes = await archive(asked.map((fileId) => memberOf(emu, fileId)))
      if (n > 1) return { bytes }
      return { bytes, holdAt: localHeaderOf(bytes, emu.control.item(asked[80] ?? "")?.name ?? ""), gate: never }
    })
    try {
      const folder = Path.join(box.root, "Subs")
      const run = box.spawn(["run", "--once"], { deadlineMs: 90_000 })
      await waitUntil(() => Fs.existsSync(folder) && Fs.readdirSync(folder).length >= 64, 60_000, "a landing batch")
      run.child.kill("SIGKILL")
      await run.exit
      // Every file at a mirror path is whole and right; the rest is partial data, out of sight.
      const landed = Fs.readdirSync(folder)
      assert.isAtLeast(landed.length, 64)
      assert.isBelow(landed.length, 100)
      const mismatched = contentMismatches(emu, box.root).filter((p) => !p.endsWith("(missing)"))
      assert.deepStrictEqual(mismatched, [])
      const inodes = new Map(landed.map((name) => [name, Fs.statSync(Path.join(folder, name)).ino]))
      release()

      const again = await box.run(["run", "--once"])
      assert.strictEqual(again.code, 0, again.stderr)
      assert.deepStrictEqual(snapshot(box.root), expectedTree(emu))
      assert.deepStrictEqual(contentMismatches(emu, box.root), [])
      for (const [name, ino] of inodes) assert.strictEqual(Fs.statSync(Path.join(folder, name)).ino, ino, name)
      const landedIds = new Set(ids.filter((fileId) => inodes.has(emu.control.item(fileId)?.name ?? "")))
      assert.sameMembers(
        [...(zips.asked[1] ?? [])],
        ids.filter((fileId) => !landedIds.has(fileId)),
        "the second archive holds exactly what was missing"
      )
      assert.strictEqual(requests(emu).fileGets, 0)
    } finally {
      release()
      await zips.close()
    }
  })

  it("never replaces a user's file: one there before the run, one put there while the archive streams", async () => {
    box = await sandbox()
    const emu = box.emu
    const ids = seedFolder(emu, "Subs", 40, 1_000)
    const folder = Path.join(box.root, "Subs")
    Fs.mkdirSync(folder)
    const before = emu.control.item(ids[3] ?? "")?.name ?? assert.fail("no file")
    const during = emu.control.item(ids[39] ?? "")?.name ?? assert.fail("no file")
    Fs.writeFileSync(Path.join(folder, before), "mine, from before")
    let streaming = () => {}
    const started = new Promise<void>((resolve) => {
      streaming = resolve
    })
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const zips = await craftedZips(emu, async (asked) => {
      const bytes = await archive(asked.map((fileId) => memberOf(emu, fileId)))
      streaming()
      return { bytes, holdAt: localHeaderOf(bytes, during) + 40, gate }
    })
    try {
      const run = box.spawn(["run", "--once"])
      await started
      Fs.writeFileSync(Path.join(folder, during), "mine, from during")
      release()
      const result = await run.exit
      assert.strictEqual(result.code, 1, "the file that could not land is reported")
      assert.match(result.stderr, new RegExp(during.replace(".", "\\.")))
      // The planner keeps a file it did not write as a conflict copy beside the mirror's.
      const kept = Fs.readdirSync(folder).filter(
        (name) => Fs.readFileSync(Path.join(folder, name), "utf8") === "mine, from before"
      )
      assert.lengthOf(kept, 1, "the user's file from before is kept, under a conflict copy's name")
      assert.strictEqual(Fs.readFileSync(Path.join(folder, during), "utf8"), "mine, from during")
      const others = contentMismatches(emu, box.root).filter((p) => !p.endsWith(before) && !p.endsWith(during))
      assert.deepStrictEqual(others, [])
    } finally {
      release()
      await zips.close()
    }
  })
})
