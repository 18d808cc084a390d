/**
 * `npm run build` (also run by `npm ci` and `npm install`, through `prepare`): bundles the
 * web page into `dist/web/` (scripts/buildPage.ts) and the CLI into `dist/`: the entry
 * `dist/dlsync.mjs`, which `bin/dlsync.js` runs whenever it is newer than every source (see
 * `freshBundleTime` there; otherwise the launcher runs the sources directly), and the
 * chunks it imports, `dist/chunks/*.mjs`.
 *
 * Why a bundle: memory. Running the ~170 type-stripped sources loads Node's TypeScript
 * stripper (≈ 17 MB) and every module of Effect, HTTP client and server included, as
 * separate module records; a tree-shaken bundle holds only the code dlsync uses. Measured
 * with `/usr/bin/time -f %M node bin/dlsync.js --version`: 183 MB from the sources, 107 MB
 * from one bundle. Not minified, so stack traces stay readable (each module's code is
 * marked with its source path in the bundle).
 *
 * Why chunks: V8 keeps the source of every script it loads (for lazy compilation). Each
 * command's implementation is a dynamic `import()` in its command-line definition
 * (src/cli/), so esbuild splits it into chunks of its own and a command loads only its own
 * code: the daemon holds neither the emulator nor the sign-in flow nor the demo. `--version`
 * as above: 91 MB from one bundle, 70–75 MB from the chunks.
 *
 *   node scripts/build.ts [--entry src/main.ts --out dist/dlsync.mjs]
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { type BuildOptions, build } from "esbuild"
import { buildPage } from "./buildPage.ts"
import { lazySegmenter } from "./lazySegmenter.ts"
import { namespaceImports } from "./namespaceImports.ts"

/** The folder, beside the entry, that holds its chunks. */
export const CHUNKS_DIR = "chunks"

/**
 * Options shared by the CLI bundle and the benchmarks' bundles of their runners: `outfile`
 * is the entry, its chunks go into CHUNKS_DIR beside it.
 */
export const bundleOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [{ in: entry, out: Path.basename(outfile, ".mjs") }],
  outdir: Path.dirname(outfile),
  outExtension: { ".js": ".mjs" },
  splitting: true,
  // Content-hashed: a chunk's name changes with its code, so an entry never imports a chunk
  // of another build (see `install` below).
  chunkNames: `${CHUNKS_DIR}/[name]-[hash]`,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  // A native addon: loaded from node_modules at run time.
  external: ["better-sqlite3"],
  // Bundled CommonJS dependencies (undici, qrcode-terminal) call require() for Node's
  // built-in modules; an ES module has none of its own (each chunk gets this line too).
  banner: {
    js: 'import { createRequire as __dlsyncRequire } from "node:module"; const require = __dlsyncRequire(import.meta.url);'
  },
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  // Effect's modules imported one by one, so that only what is used is bundled; its CLI's
  // text segmenter made on first use.
  plugins: [namespaceImports(), lazySegmenter()]
})

/** Bundles `entry` into `outfile` and its chunks beside it; returns every file written. */
export const bundle = async (entry: string, outfile: string): Promise<ReadonlyArray<string>> => {
  const result = await build(bundleOptions(entry, outfile))
  const written = Object.keys(result.metafile?.outputs ?? {}).map((file) => Path.resolve(file))
  for (const file of written) asciiOnly(file)
  return written
}

/**
 * esbuild escapes non-ASCII characters in code but keeps comments as written, and a few
 * comments of the bundled dependencies hold some (’, §). One such character makes V8 hold
 * the whole source, which it keeps for lazy compilation, as a two-byte string: 8.6 MB of the
 * daemon's heap instead of 4.3 (a heap snapshot of an idle `dlsync run`). Escaped, a comment
 * reads the same and the source stays one-byte.
 */
const asciiOnly = (file: string): void => {
  const text = Fs.readFileSync(file, "utf8")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, on purpose
  const escaped = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
  if (escaped !== text) Fs.writeFileSync(file, escaped)
}

/**
 * Builds into a folder of its own beside `outfile`, then moves the chunks into place and the
 * entry last, so that a dlsync starting while `npm link` or `npx` rebuilds (they run
 * `prepare` too) never imports a half-written file: it runs either the old entry with its
 * chunks or the new one with its own. Then the chunks of older builds are removed; those of
 * the build just replaced stay, for a dlsync running it that imports one later.
 */
export const install = async (entry: string, outfile: string): Promise<void> => {
  const outdir = Path.dirname(outfile)
  const partial = Path.join(outdir, `.partial-${process.pid}`)
  Fs.rmSync(partial, { recursive: true, force: true })
  try {
    const written = await bundle(entry, Path.join(partial, Path.basename(outfile)))
    const chunks = Path.join(outdir, CHUNKS_DIR)
    Fs.mkdirSync(chunks, { recursive: true })
    const kept = new Set(Fs.existsSync(outfile) ? chunksOf(outfile) : [])
    for (const file of written) {
      const rel = Path.relative(partial, file)
      if (rel === Path.basename(outfile)) continue
      Fs.renameSync(file, Path.join(outdir, rel))
      kept.add(Path.basename(rel))
    }
    Fs.renameSync(Path.join(partial, Path.basename(outfile)), outfile)
    for (const old of Fs.readdirSync(chunks)) if (!kept.has(old)) Fs.rmSync(Path.join(chunks, old), { force: true })
  } finally {
    Fs.rmSync(partial, { recursive: true, force: true })
  }
}

/** The names of the chunks an installed entry imports, statically or on demand, however deep. */
const chunksOf = (entry: string): ReadonlyArray<string> => {
  const found = new Set<string>()
  const visit = (file: string) => {
    if (!Fs.existsSync(file)) return
    for (const [, rel] of Fs.readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.\.?\/[^"]+\.mjs)"/g)) {
      const chunk = Path.resolve(Path.dirname(file), rel ?? "")
      if (found.has(Path.basename(chunk))) continue
      found.add(Path.basename(chunk))
      visit(chunk)
    }
  }
  visit(entry)
  return [...found]
}

if (import.meta.main) {
  const root = Path.resolve(import.meta.dirname, "..")
  const { values } = parseArgs({
    options: {
      entry: { type: "string", default: Path.join(root, "src", "main.ts") },
      out: { type: "string", default: Path.join(root, "dist", "dlsync.mjs") }
    }
  })
  await install(values.entry, values.out)
  // The web page the daemon serves (scripts/buildPage.ts), beside the default bundle.
  if (Path.resolve(values.out) === Path.join(root, "dist", "dlsync.mjs")) await buildPage()
}
