/**
 * ARCHITECTURE.md lists src/'s folders bottom floor first and says an arrow runs only
 * downwards. This holds the code to it: every static import of another folder must name a
 * folder listed above the importing one. (`cli/` reaches `commands/` by dynamic import only:
 * the on-demand seam, not an arrow.)
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"

const ROOT = Path.resolve(import.meta.dirname, "../..")
const SRC = Path.join(ROOT, "src")

/** The folders in the order of ARCHITECTURE.md's table. */
const documentedOrder = (): ReadonlyArray<string> => {
  const text = Fs.readFileSync(Path.join(ROOT, "ARCHITECTURE.md"), "utf8")
  const table = text.slice(text.indexOf("## Folders, bottom floor first"))
  return [...table.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((m) => m[1] ?? "")
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => Path.join(e.parentPath, e.name))

/** The src/ folders a file imports statically (`import … from "…"`, `export … from "…"`). */
const importedFolders = (file: string): ReadonlyArray<string> => {
  const text = Fs.readFileSync(file, "utf8")
  const folders = new Set<string>()
  for (const m of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)) {
    const target = Path.relative(SRC, Path.resolve(Path.dirname(file), m[1] ?? ""))
    const folder = target.split(Path.sep)[0] ?? ""
    if (target.includes(Path.sep) && !target.startsWith("..")) folders.add(folder)
  }
  return [...folders]
}

describe("the import order of ARCHITECTURE.md", () => {
  it("lists every folder of src/ once", () => {
    const listed = documentedOrder()
    const present = Fs.readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
    assert.sameMembers([...listed], present)
    assert.strictEqual(new Set(listed).size, listed.length)
  })

  it("every static import runs downwards: to the same folder or one listed above", () => {
    const order = documentedOrder()
    const upward: Array<string> = []
    for (const file of sourceFiles(SRC)) {
      const own = Path.relative(SRC, file).split(Path.sep)
      if (own.length < 2) continue
      const from = own[0] ?? ""
      for (const to of importedFolders(file)) {
        if (to !== from && order.indexOf(to) > order.indexOf(from)) upward.push(`${Path.relative(ROOT, file)} → ${to}/`)
      }
    }
    assert.deepStrictEqual(upward, [])
  })
})
