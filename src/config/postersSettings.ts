/**
 * The `[posters]` section: poster sidecars beside the mirrored videos (src/posters/). Off by
 * default: with posters off dlsync asks the service for no poster data and fetches none.
 * The keys' schemas are `sections.posters` in fields.ts; config.example.toml documents them.
 */
import { Schema } from "effect"

export type PosterStyle = "sidecar" | "folder"

export interface PostersSettings {
  readonly enabled: boolean
  /** `sidecar`: `<video name>-poster.webp` beside each video; `folder`: one `poster.webp` per folder. */
  readonly style: PosterStyle
}

export const POSTERS_DEFAULTS: PostersSettings = { enabled: false, style: "sidecar" }

/** The section's keys (fields.ts adds them to the reference table). */
export const postersFields = {
  enabled: { schema: Schema.optionalKey(Schema.Boolean), env: "boolean" },
  style: { schema: Schema.optionalKey(Schema.Literals(["sidecar", "folder"])), env: "string" }
} as const

export const postersSettings = (
  raw: { readonly enabled?: boolean; readonly style?: PosterStyle } | undefined
): PostersSettings => ({
  enabled: raw?.enabled ?? POSTERS_DEFAULTS.enabled,
  style: raw?.style ?? POSTERS_DEFAULTS.style
})
