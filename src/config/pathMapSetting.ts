/**
 * A `path_map` key: how local paths read inside an app's container, as pairs
 * `[["/local/prefix", "/prefix/the/app/sees"], …]`; in the environment (a list) each pair is
 * written `/local/prefix=/prefix/the/app/sees`. Applied by intake/pathMap.ts.
 */
import { Schema } from "effect"
import type { PathMap } from "../intake/pathMap.ts"

const NonEmpty = Schema.String.pipe(Schema.check(Schema.isMinLength(1)))
const Absolute = NonEmpty.pipe(
  Schema.check(Schema.makeFilter((s: string) => s.startsWith("/"), { expected: "an absolute path" }))
)

export const PathMapSetting = Schema.Array(
  Schema.Union([
    Schema.Tuple([Absolute, Absolute]),
    Schema.String.pipe(
      Schema.check(
        Schema.makeFilter((s: string) => /^\/[^=]*=\/.*$/.test(s), { expected: '"/local/prefix=/prefix/the/app/sees"' })
      )
    )
  ])
)

export type PathMapEntry = (typeof PathMapSetting.Type)[number]

/** The decoded setting as pairs. */
export const pathMapFrom = (entries: ReadonlyArray<PathMapEntry> | undefined): PathMap =>
  (entries ?? []).map((entry): readonly [string, string] => {
    if (typeof entry !== "string") return entry
    const at = entry.indexOf("=")
    return [entry.slice(0, at), entry.slice(at + 1)]
  })
