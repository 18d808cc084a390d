/**
 * An esbuild plugin for the bundle (scripts/build.ts): `import { Effect, Schema } from "effect"`
 * is bundled as `import * as Effect from "effect/Effect"` and so on, one namespace import per
 * module of Effect's barrels (`effect`, `effect/cli`, …).
 *
 * Why: the barrels re-export each module whole (`export * as Schema from "./Schema.js"`), and
 * esbuild keeps every export of a module named through such a re-export, with all it imports:
 * `run --once` loaded all of Schema, Stream, Channel, PubSub, Cron, the crypto modules and the
 * YAML parser, 2.3 MB of JavaScript in 44 files. Imported from the module itself, only the
 * members used are kept: 1.3 MB. Measured on `run --once` with nothing to do (8 alternated
 * pairs, `/usr/bin/time`): CPU 0.68 → 0.60 s, peak RSS 75.6 → 70.5 MB.
 *
 * The sources keep Effect's own style (barrel imports); type-stripped runs (a stale bundle,
 * the tests) load the barrels as they are. Names a barrel exports otherwise (`pipe`) stay
 * imported from it.
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import type { Plugin } from "esbuild"

/** `import { A, type B, C as D } from "effect"` and the barrels below it (`effect/cli`). */
const BARREL_IMPORT = /^import \{([^}]*)\} from "(effect(?:\/[a-z-]+)?)"/gm

/** One imported name: `type`, the exported name, its local alias. */
const SPECIFIER = /^(type\s+)?(\w+)(?:\s+as\s+(\w+))?$/

/** The names a barrel re-exports as modules: `export * as Schema from "./Schema.js"`. */
export type Barrels = (barrel: string) => ReadonlySet<string> | undefined

/** `source` with each barrel import of a module rewritten as that module's namespace import. */
export const rewriteBarrelImports = (source: string, modulesOf: Barrels): string =>
  source.replace(BARREL_IMPORT, (whole, list: string, barrel: string) => {
    const modules = modulesOf(barrel)
    if (modules === undefined) return whole
    const kept: Array<string> = []
    const imports: Array<string> = []
    for (const specifier of list.split(",").map((s) => s.trim())) {
      if (specifier === "") continue
      const [, type, name, alias] = SPECIFIER.exec(specifier) ?? []
      if (name === undefined || !modules.has(name)) kept.push(specifier)
      else imports.push(`import ${type ? "type " : ""}* as ${alias ?? name} from "${barrel}/${name}"`)
    }
    if (kept.length > 0) imports.push(`import { ${kept.join(", ")} } from "${barrel}"`)
    // One line, so that the lines of the source keep their numbers.
    return imports.join("; ")
  })

/** Reads each barrel's re-exported modules once, from the installed package; undefined for a non-barrel. */
const installedBarrels = (): Barrels => {
  const known = new Map<string, ReadonlySet<string> | undefined>()
  return (barrel) => {
    if (!known.has(barrel)) {
      const file = fileURLToPath(import.meta.resolve(barrel))
      const names = [...Fs.readFileSync(file, "utf8").matchAll(/^export \* as (\w+) from "\.\/\w+\.js";$/gm)]
      known.set(barrel, names.length === 0 ? undefined : new Set(names.map(([, name]) => name ?? "")))
    }
    return known.get(barrel)
  }
}

export const namespaceImports = (): Plugin => ({
  name: "effect-namespace-imports",
  setup(build) {
    const barrels = installedBarrels()
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined
      const source = Fs.readFileSync(args.path, "utf8")
      const rewritten = rewriteBarrelImports(source, barrels)
      return rewritten === source ? undefined : { contents: rewritten, loader: "ts" }
    })
  }
})
