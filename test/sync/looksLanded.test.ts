/**
 * `looksLanded` on a real file system: a file given the remote updated_at with futimes, as
 * the transfer engine lands it, is recognised at any millisecond (futimes takes a float of
 * seconds and may round a microsecond down); a file written since is not.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { looksLanded } from "../../src/domain/LocalEntry.ts"
import { toLocalStat } from "../../src/sync/localOps.ts"
import { file } from "./fixtures.ts"

describe("looksLanded", () => {
  it("recognises a file landed with futimes at any millisecond, and not one overwritten since", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-landed-"))
    const path = Path.join(dir, "f")
    try {
      // 1708441369057 is one futimes stores as …056999000 ns on Linux.
      const times = [1708441369057, ...Array.from({ length: 200 }, (_, i) => 1_767_225_600_000 + i * 7_919_993)]
      for (const ms of times) {
        const item = file("f", "f", null, { size: 3, updatedAt: new Date(ms).toISOString() })
        Fs.writeFileSync(path, "abc")
        const fd = Fs.openSync(path, "r+")
        Fs.futimesSync(fd, new Date(ms), new Date(ms))
        Fs.closeSync(fd)
        assert.isTrue(looksLanded(toLocalStat(Fs.lstatSync(path, { bigint: true })), item), `landed at ${ms}`)
        Fs.writeFileSync(path, "xyz")
        assert.isFalse(looksLanded(toLocalStat(Fs.lstatSync(path, { bigint: true })), item), `overwritten at ${ms}`)
        assert.isFalse(looksLanded(toLocalStat(Fs.lstatSync(dir, { bigint: true })), item), "a folder")
      }
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
