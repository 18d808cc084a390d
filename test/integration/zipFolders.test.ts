/**
 * Many small files of one folder come as ZIP archives (issue 38), through a real
 * `dlsync run --once` against the emulator's real archives.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { decodeToken } from "../../src/emulator/signedToken.ts"
import { contentMismatches, expectedTree, type Sandbox, sandbox, snapshot } from "./harness.ts"

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
      box = await sandbox()
      box.emu.control.setZip({ method })
      const ids = seedFolder(box.emu, "Subs", 250, 3_000)
      box.emu.control.addFile({ name: "alone.txt", sizeBytes: 10 })
      const result = await box.run(["run", "--once"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
      assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
      const made = requests(box.emu)
      assert.strictEqual(made.zipLinks, 3, "250 files: 3 archives of at most 100")
      assert.sameMembers(made.archives.flat(), ids)
      assert.strictEqual(made.fileLinks, 1, "only the file alone in the root goes one by one")
      assert.strictEqual(made.fileGets, 1)
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
