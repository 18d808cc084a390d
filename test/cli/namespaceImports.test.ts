/**
 * scripts/namespaceImports.ts: a barrel import of Effect's modules becomes one namespace
 * import per module (so that esbuild keeps only the members used); anything else is left as
 * written.
 */
import { assert, describe, it } from "vitest"
import { rewriteBarrelImports } from "../../scripts/namespaceImports.ts"

const barrels = (barrel: string) =>
  ({ effect: new Set(["Effect", "Schema", "Scope"]), "effect/cli": new Set(["Command", "Flag"]) })[barrel]

describe("rewriteBarrelImports", () => {
  it("imports each module of a barrel as its own namespace, types and aliases kept", () => {
    assert.strictEqual(
      rewriteBarrelImports('import { Effect, type Scope, Schema as S } from "effect"\nEffect.void\n', barrels),
      'import * as Effect from "effect/Effect"; import type * as Scope from "effect/Scope"; import * as S from "effect/Schema"\nEffect.void\n'
    )
  })

  it("rewrites an import spread over lines into one line, and the barrels below `effect`", () => {
    const source = 'import {\n  Command,\n  Flag,\n} from "effect/cli"\nconst x = 1\n'
    assert.strictEqual(
      rewriteBarrelImports(source, barrels),
      'import * as Command from "effect/cli/Command"; import * as Flag from "effect/cli/Flag"\nconst x = 1\n'
    )
  })

  it("keeps a name the barrel does not re-export as a module, imported from the barrel", () => {
    assert.strictEqual(
      rewriteBarrelImports('import { Effect, pipe } from "effect"', barrels),
      'import * as Effect from "effect/Effect"; import { pipe } from "effect"'
    )
  })

  it("leaves other imports alone: another package, a barrel it does not know, a type-only import", () => {
    for (const source of [
      'import { Effect } from "effect-extra"',
      'import { HttpClient } from "effect/http"',
      'import type { Effect } from "effect"',
      'import * as Schema from "effect/Schema"',
      'const text = `import { Effect } from "effect"`'
    ]) {
      assert.strictEqual(rewriteBarrelImports(source, barrels), source)
    }
  })
})
