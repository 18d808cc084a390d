/**
 * `npm run build` (also run by `npm ci` and `npm install`, through `prepare`): bundles the
 * CLI into `dist/dlsync.mjs`, which `bin/dlsync.js` runs whenever it is newer than every
 * source (see `bundleIsFresh` there); otherwise the launcher runs the sources directly.
 *
 * Why a bundle: memory. Running the ~170 type-stripped sources loads Node's TypeScript
 * stripper (≈ 17 MB) and every module of Effect, HTTP client and server included, as
 * separate module records; one tree-shaken file holds only the code dlsync uses. Measured
 * with `/usr/bin/time -f %M node bin/dlsync.js --version`: 183 MB from the sources, 107 MB
 * from the bundle. Not minified, so stack traces stay readable (each module's code is
 * marked with its source path in the bundle).
 *
 *   node scripts/build.ts [--entry src/main.ts --out dist/dlsync.mjs]
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { type BuildOptions, build } from "esbuild"

/** Options shared by the CLI bundle and the benchmarks' bundles of their runners. */
export const bundleOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  // A native addon: loaded from node_modules at run time.
  external: ["better-sqlite3"],
  // Bundled CommonJS dependencies (undici, qrcode-terminal) call require() for Node's
  // built-in modules; an ES module has none of its own.
  banner: {
    js: 'import { createRequire as __dlsyncRequire } from "node:module"; const require = __dlsyncRequire(import.meta.url);'
  },
  legalComments: "none",
  logLevel: "warning"
})

export const bundle = async (entry: string, outfile: string): Promise<void> => {
  await build(bundleOptions(entry, outfile))
  asciiOnly(outfile)
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

if (import.meta.main) {
  const root = Path.resolve(import.meta.dirname, "..")
  const { values } = parseArgs({
    options: {
      entry: { type: "string", default: Path.join(root, "src", "main.ts") },
      out: { type: "string", default: Path.join(root, "dist", "dlsync.mjs") }
    }
  })
  // Written beside and renamed into place: a dlsync starting while `npm link` or `npx`
  // rebuilds (they run `prepare` too) never imports a half-written bundle.
  const partial = `${values.out}.${process.pid}.partial`
  await bundle(values.entry, partial)
  Fs.renameSync(partial, values.out)
}
