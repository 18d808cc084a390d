/**
 * scripts/lazySegmenter.ts: the bundle's copy of Effect's CLI output module creates its
 * Intl.Segmenter on first use, measures text as the original does, and a module that no
 * longer reads as expected is left as it is.
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"
import { lazySegmenterSource } from "../../scripts/lazySegmenter.ts"

const installed = fileURLToPath(import.meta.resolve("effect/cli/CliOutput"))

/** The module's `displayWidth` from `source`, loaded from a data: URL beside nothing else it needs. */
const displayWidthOf = async (source: string): Promise<(text: string) => number> => {
  const url = `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`
  return ((await import(url)) as { displayWidth: (text: string) => number }).displayWidth
}

/** The part of the module that measures text: from stripAnsi to displayWidth, exports kept. */
const measuringPart = (source: string): string => {
  const from = source.indexOf("const stripAnsi")
  const to = source.indexOf("\n};\n", source.indexOf("export const displayWidth")) + 4
  return source.slice(from, to)
}

describe("lazySegmenterSource", () => {
  it("rewrites the installed Effect's module: no Segmenter at load, the same line count", () => {
    const source = Fs.readFileSync(installed, "utf8")
    const lazy = lazySegmenterSource(source)
    assert.isDefined(lazy, "Effect's CliOutput.js no longer reads as scripts/lazySegmenter.ts expects")
    assert.notMatch(lazy ?? "", /^const graphemeSegmenter = \/\*#__PURE__\*\/new Intl\.Segmenter/m)
    assert.include(lazy ?? "", "graphemeSegmenter().segment(")
    assert.strictEqual(lazy?.split("\n").length, source.split("\n").length)
  })

  it("measures text as the original does, the Segmenter made at the first measure", async () => {
    const source = Fs.readFileSync(installed, "utf8")
    const original = await displayWidthOf(measuringPart(source))
    const lazy = await displayWidthOf(measuringPart(lazySegmenterSource(source) ?? ""))
    for (const text of ["file", "ファイル", "é", "1️⃣", "\u001B[1mbold\u001B[0m", ""]) {
      assert.strictEqual(lazy(text), original(text), text)
    }
  })

  it("leaves a module that reads otherwise alone", () => {
    assert.isUndefined(lazySegmenterSource("const graphemeSegmenter = makeOne();\ngraphemeSegmenter.segment(x)\n"))
    assert.isUndefined(lazySegmenterSource("export const x = 1\n"))
  })
})
