/**
 * scripts/build.ts: the bundle is ASCII only, comments of bundled code included, so that V8
 * holds its source (kept for lazy compilation) as a one-byte string, half the size.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { bundle } from "../../scripts/build.ts"

let dir = ""

beforeEach(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-build-"))
})

afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("scripts/build.ts bundle", () => {
  it("writes only ASCII, and the code means the same", async () => {
    // Written as undici's are: esbuild keeps the comments of a class body.
    Fs.writeFileSync(
      Path.join(dir, "dep.cjs"),
      'class Greeting {\n  // The response’s status (RFC 9111 §5.2): a comment esbuild keeps.\n  text(name) { return "héllo " + name + " ✓" }\n}\nmodule.exports = { Greeting }\n'
    )
    Fs.writeFileSync(
      Path.join(dir, "entry.ts"),
      'import { Greeting } from "./dep.cjs"\nconsole.log(new Greeting().text("wörld"))\n'
    )
    const out = Path.join(dir, "out.mjs")
    await bundle(Path.join(dir, "entry.ts"), out)
    const text = Fs.readFileSync(out, "utf8")
    assert.deepStrictEqual(
      [...text].filter((c) => c.charCodeAt(0) > 0x7f),
      [],
      "non-ASCII characters are left in the bundle"
    )
    assert.include(text, "a comment esbuild keeps")
    assert.strictEqual(execFileSync(process.execPath, [out], { encoding: "utf8" }), "héllo wörld ✓\n")
  })
})
