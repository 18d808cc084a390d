/**
 * Path mapping for containers: `[["/local/prefix", "/prefix/the/other/side/sees"]]`, the shape
 * the *arr apps' remote path mappings use. The first pair whose local prefix holds the path
 * (at a `/` boundary) rewrites it; a path no pair holds passes unchanged.
 */
import { Schema } from "effect"

export type PathMap = ReadonlyArray<readonly [string, string]>

const Prefix = Schema.String.pipe(Schema.check(Schema.isPattern(/^\//, { expected: "an absolute path" })))

/** A `path_map` setting: pairs of absolute paths. */
export const PathMapSetting = Schema.Array(Schema.Tuple([Prefix, Prefix]))

/** The path as the other side sees it. */
export const mapPath = (map: PathMap, path: string): string => {
  for (const [from, to] of map) {
    const prefix = from.replace(/\/+$/, "")
    if (path === prefix || prefix === "") return `${to.replace(/\/+$/, "")}${path.slice(prefix.length)}` || "/"
    if (path.startsWith(`${prefix}/`)) return `${to.replace(/\/+$/, "")}${path.slice(prefix.length)}`
  }
  return path
}
