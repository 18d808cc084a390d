/**
 * scripts/build.ts: every file of the bundle is ASCII only, comments of bundled code
 * included, so that V8 holds its source (kept for lazy compilation) as a one-byte string,
 * half the size; each command's implementation is a chunk of its own, so that the daemon
 * loads only its own code; and of Effect only the members used are bundled.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { bundle, install } from "../../scripts/build.ts"

let dir = ""

beforeEach(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-build-"))
})

afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const nonAscii = (file: string) => [...Fs.readFileSync(file, "utf8")].filter((c) => c.charCodeAt(0) > 0x7f)

/**
 * The files a run of `entry` loads: its static imports, then for each name of `lazy` in turn
 * the chunk of that name a loaded file imports dynamically, with its static imports.
 */
const loadedBy = (entry: string, lazy: ReadonlyArray<string>): ReadonlyArray<string> => {
  const loaded = new Set<string>()
  const visit = (file: string) => {
    if (loaded.has(file)) return
    loaded.add(file)
    for (const [, rel] of Fs.readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?"(\.\.?\/[^"]+)";/gms)) {
      visit(Path.resolve(Path.dirname(file), rel ?? ""))
    }
  }
  visit(entry)
  for (const name of lazy) {
    const dynamic = new RegExp(`import\\("(\\.\\.?/(?:[^"]*/)?${name}-[^"/]*\\.mjs)"\\)`)
    const from = [...loaded].find((file) => dynamic.test(Fs.readFileSync(file, "utf8")))
    assert.isDefined(from, `nothing loaded imports a ${name} chunk`)
    const rel = dynamic.exec(Fs.readFileSync(from ?? "", "utf8"))?.[1] ?? ""
    visit(Path.resolve(Path.dirname(from ?? ""), rel))
  }
  return [...loaded]
}

/** The code of those files, each module marked by esbuild with its path (`// src/…`). */
const codeLoadedBy = (entry: string, lazy: ReadonlyArray<string>): string =>
  loadedBy(entry, lazy)
    .map((file) => Fs.readFileSync(file, "utf8"))
    .join("\n")

const loads = (code: string, module: string) => new RegExp(`^// .*${module}`, "m").test(code)

describe("scripts/build.ts bundle", () => {
  it("writes only ASCII, in the entry and its chunks, and the code means the same", async () => {
    // Written as undici's are: esbuild keeps the comments of a class body.
    Fs.writeFileSync(
      Path.join(dir, "dep.cjs"),
      'class Greeting {\n  // The response’s status (RFC 9111 §5.2): a comment esbuild keeps.\n  text(name) { return "héllo " + name + " ✓" }\n}\nmodule.exports = { Greeting }\n'
    )
    Fs.writeFileSync(
      Path.join(dir, "lazy.ts"),
      '// A chunk’s comment.\nexport const farewell = (name: string) => "adiós " + name\n'
    )
    Fs.writeFileSync(
      Path.join(dir, "entry.ts"),
      'import { Greeting } from "./dep.cjs"\nconsole.log(new Greeting().text("wörld"))\nconst { farewell } = await import("./lazy.ts")\nconsole.log(farewell("wörld"))\n'
    )
    const out = Path.join(dir, "out", "entry.mjs")
    const written = await bundle(Path.join(dir, "entry.ts"), out)
    assert.isAbove(written.length, 1, "the dynamic import is a chunk of its own")
    for (const file of written) assert.deepStrictEqual(nonAscii(file), [], `non-ASCII characters left in ${file}`)
    assert.include(Fs.readFileSync(out, "utf8"), "a comment esbuild keeps")
    assert.strictEqual(execFileSync(process.execPath, [out], { encoding: "utf8" }), "héllo wörld ✓\nadiós wörld\n")
  })

  it("installs the entry with its chunks, keeps those of the build it replaces and removes older ones", async () => {
    const out = Path.join(dir, "dist", "entry.mjs")
    const chunks = () => Fs.readdirSync(Path.join(dir, "dist", "chunks")).sort()
    const build = async (word: string) => {
      Fs.writeFileSync(Path.join(dir, "lazy.ts"), `export const word = "${word}"\n`)
      await install(Path.join(dir, "entry.ts"), out)
      return chunks()
    }
    Fs.writeFileSync(Path.join(dir, "entry.ts"), 'console.log((await import("./lazy.ts")).word)\n')
    const first = await build("one")
    assert.lengthOf(first, 1)
    const second = await build("two")
    assert.strictEqual(execFileSync(process.execPath, [out], { encoding: "utf8" }), "two\n")
    // A dlsync started from the first build may still import its chunk.
    assert.includeMembers(second, first)
    assert.lengthOf(second, 2)
    const third = await build("three")
    assert.notIncludeMembers(third, first)
    assert.lengthOf(third, 2)
    assert.deepStrictEqual(Fs.readdirSync(Path.join(dir, "dist")).sort(), ["chunks", "entry.mjs"])
  })

  it("`dlsync run` loads neither the emulator, the sign-in flow, the demo nor all of undici; `--once` none of the daemon's servers nor undici", async () => {
    const out = Path.join(dir, "dist", "dlsync.mjs")
    await bundle(Path.resolve(import.meta.dirname, "../../src/main.ts"), out)
    const once = codeLoadedBy(out, ["run"])
    const daemon = codeLoadedBy(out, ["run", "Daemon", "daemon"])
    // The command line checks the emulator's --library spec (librarySpec.ts) and nothing else of it.
    for (const module of [
      "src/emulator/(?!librarySpec\\.ts$)",
      "src/commands/demo.ts",
      "src/commands/login.ts",
      "src/auth/signIn.ts",
      "node_modules/qrcode-terminal/",
      "node_modules/undici/index\\.js"
    ]) {
      assert.isFalse(loads(daemon, module), `run loads ${module}`)
    }
    for (const module of ["src/engine/Daemon\\.ts$", "src/server/HealthServer\\.ts$", "node_modules/ws/"]) {
      assert.isTrue(loads(daemon, module), `the daemon loads ${module}`)
      assert.isFalse(loads(once, module), `run --once loads ${module}`)
    }
    assert.isTrue(loads(once, "src/engine/MirrorPass\\.ts$"))
    // The API client is on Node's own http (src/api/ApiTransport.ts): undici brings http2 and a
    // WebAssembly parser to compile.
    assert.isFalse(loads(once, "node_modules/undici/"), "run --once loads undici")
    // Effect's modules come one by one (scripts/namespaceImports.ts), not whole through its
    // barrels: none of these is used by `run --once`.
    for (const module of ["Cron", "JsonSchema", "encoding/Yaml", "encoding/Toml", "crypto/Cipher"]) {
      assert.isFalse(loads(once, `node_modules/effect/dist/${module}\\.js$`), `run --once loads Effect's ${module}`)
    }
    // Imported as an ES module, node:http loads Node's own undici (src/server/nodeHttp.ts).
    assert.notMatch(daemon, /from "node:http"/)
  })
})
