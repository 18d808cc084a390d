/**
 * An esbuild plugin for the bundle (scripts/build.ts): Effect's CLI output module creates an
 * `Intl.Segmenter` when it loads, for measuring text widths in help and tables; in the bundle
 * it is created on first use instead.
 *
 * Why: creating it loads ICU's grapheme rules, 16 ms of CPU in every start of every command
 * (`new Intl.Segmenter(undefined, { granularity: "grapheme" })` alone, Node 24), though only
 * `--help` and error output measure text. `run --once` with nothing to do, 12 alternated
 * pairs: CPU 0.45 → 0.43 s, peak RSS 68 → 66 MB.
 *
 * When Effect's code no longer reads as expected, the module is bundled as it is and esbuild
 * prints a warning (test/cli/lazySegmenter.test.ts fails on the installed Effect then).
 */
import * as Fs from "node:fs"
import type { Plugin } from "esbuild"

/** `const graphemeSegmenter = /*#__PURE__*\/new Intl.Segmenter(…);`, as Effect 4.1 writes it. */
const EAGER = /^const graphemeSegmenter = \/\*#__PURE__\*\/new Intl\.Segmenter\(([^;]*)\);$/m
const USE = /\bgraphemeSegmenter\.segment\(/g

/** `source` with the segmenter made on first use; undefined when it does not read as expected. */
export const lazySegmenterSource = (source: string): string | undefined => {
  const eager = EAGER.exec(source)
  if (eager === null || source.match(USE) === null) return undefined
  // The same number of lines, so that the module's lines keep their numbers.
  const lines = eager[0].split("\n").length - 1
  const lazy = `let graphemeSegmenterMade; const graphemeSegmenter = () => (graphemeSegmenterMade ??= new Intl.Segmenter(${eager[1]?.replace(/\s+/g, " ")}));${"\n".repeat(lines)}`
  return source.replace(EAGER, () => lazy).replace(USE, "graphemeSegmenter().segment(")
}

export const lazySegmenter = (): Plugin => ({
  name: "lazy-segmenter",
  setup(build) {
    build.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]cli[\\/]CliOutput\.js$/ }, (args) => {
      const source = Fs.readFileSync(args.path, "utf8")
      const lazy = lazySegmenterSource(source)
      if (lazy !== undefined) return { contents: lazy, loader: "js" }
      return {
        contents: source,
        loader: "js",
        warnings: [
          { text: "Effect's CliOutput.js changed: its Intl.Segmenter is created at load (scripts/lazySegmenter.ts)" }
        ]
      }
    })
  }
})
