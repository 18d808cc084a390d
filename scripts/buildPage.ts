/**
 * The web page's build (run by `npm run build`, so by `npm ci` and `npm install` through
 * `prepare`): bundles web/main.tsx (Preact) and web/page.css, minified, into
 * `dist/web/assets/<name>-<content hash>.<ext>`, and writes `dist/web/index.html` naming them;
 * the daemon reads them once at start and serves the page inline and compressed from memory
 * (src/web/pageAssets.ts). Built in a folder of its own, then put in place whole, so a
 * daemon never reads half a page; the assets of the build it replaces are kept beside the
 * new ones (the chunks of the build before are not).
 *
 *   node scripts/buildPage.ts [--out dist/web]
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { build } from "esbuild"

export const ROOT = Path.resolve(import.meta.dirname, "..")

/** The page's sources. */
export const PAGE_SOURCES = Path.join(ROOT, "web")

/** Where the daemon looks for the built page (src/web/WebPage.ts, builtPageDirs). */
export const PAGE_OUT = Path.join(ROOT, "dist", "web")

/** Builds the page into `outdir`, replacing what was there; returns the files written. */
export const buildPage = async (outdir: string = PAGE_OUT): Promise<ReadonlyArray<string>> => {
  const partial = `${outdir}.partial-${process.pid}`
  Fs.rmSync(partial, { recursive: true, force: true })
  try {
    const result = await build({
      entryPoints: [Path.join(PAGE_SOURCES, "main.tsx"), Path.join(PAGE_SOURCES, "page.css")],
      outdir: Path.join(partial, "assets"),
      entryNames: "[name]-[hash]",
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      target: ["es2022", "chrome110", "firefox115", "safari16"],
      jsx: "automatic",
      jsxImportSource: "preact",
      legalComments: "none",
      logLevel: "warning",
      metafile: true
    })
    const outputs = Object.keys(result.metafile.outputs).map((file) => Path.resolve(file))
    const script = outputs.find((file) => file.endsWith(".js"))
    const style = outputs.find((file) => file.endsWith(".css"))
    if (script === undefined || style === undefined) throw new Error("the page's build left no script or style")
    const html = Fs.readFileSync(Path.join(PAGE_SOURCES, "index.html"), "utf8")
      .replace("{{script}}", `assets/${Path.basename(script)}`)
      .replace("{{style}}", `assets/${Path.basename(style)}`)
    Fs.writeFileSync(Path.join(partial, "index.html"), html)
    const files = [Path.join(partial, "index.html"), ...outputs]
    for (const name of previousAssets(outdir)) {
      const from = Path.join(outdir, "assets", name)
      const to = Path.join(partial, "assets", name)
      if (Fs.existsSync(from) && !Fs.existsSync(to)) Fs.copyFileSync(from, to)
    }
    // The old page aside, the new one in, the old one removed: a reader sees one or the other.
    const old = `${outdir}.old-${process.pid}`
    if (Fs.existsSync(outdir)) Fs.renameSync(outdir, old)
    Fs.mkdirSync(Path.dirname(outdir), { recursive: true })
    Fs.renameSync(partial, outdir)
    Fs.rmSync(old, { recursive: true, force: true })
    return files.map((file) => Path.join(outdir, Path.relative(partial, file)))
  } finally {
    Fs.rmSync(partial, { recursive: true, force: true })
  }
}

/** The assets the page now in `outdir` names (none when there is none). */
const previousAssets = (outdir: string): ReadonlyArray<string> => {
  const index = Path.join(outdir, "index.html")
  if (!Fs.existsSync(index)) return []
  const html = Fs.readFileSync(index, "utf8")
  return [...html.matchAll(/"assets\/([^"/]+)"/g)].map(([, name]) => name ?? "").filter((name) => name !== "")
}

/** The newest modification time of the page's sources (ms). */
export const newestPageSource = (): number => {
  let newest = 0
  for (const entry of Fs.readdirSync(PAGE_SOURCES, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, Fs.statSync(Path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

/** Whether `outdir` holds a page built after every source changed. */
export const pageIsFresh = (outdir: string = PAGE_OUT): boolean => {
  const built = Fs.statSync(Path.join(outdir, "index.html"), { throwIfNoEntry: false })?.mtimeMs
  return built !== undefined && built >= newestPageSource()
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string", default: PAGE_OUT } } })
  await buildPage(Path.resolve(values.out))
}
