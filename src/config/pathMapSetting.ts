/**
 * A `path_map` key (the qBittorrent and SABnzbd surfaces, the media servers): how local paths
 * read for a program that mounts the same folders elsewhere, as pairs
 * `[["/local/prefix", "/prefix/the/app/sees"], …]`; from the environment, the same as JSON
 * text (env kind "json" in fields.ts). Applied by paths/pathMap.ts.
 */
import { Schema } from "effect"

/** An absolute POSIX path, or a Windows one (an app on Windows sees `D:\media`). */
const PathPrefix = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => s.startsWith("/") || /^[a-z]:[\\/]/i.test(s), {
      expected: "an absolute path"
    })
  )
)
export const PathMapSetting = Schema.Array(Schema.Tuple([PathPrefix, PathPrefix]))
