/**
 * The `[posters]` section: poster sidecars beside the mirrored videos (src/posters/). Off by
 * default: with posters off dlsync asks the service for no poster data and fetches none.
 * config.example.toml documents the keys.
 */
import { Schema } from "effect"
import { defaulted } from "./keySchemas.ts"

export type PosterStyle = "sidecar" | "folder"

export interface PostersSettings {
  readonly enabled: boolean
  /** `sidecar`: `<video name>-poster.webp` beside each video; `folder`: one `poster.webp` per folder. */
  readonly style: PosterStyle
}

/** The section's keys and their defaults (fields.ts adds them to the reference table). */
export const postersFields = {
  enabled: { schema: defaulted(Schema.Boolean, false), env: "boolean" },
  style: { schema: defaulted(Schema.Literals(["sidecar", "folder"]), "sidecar"), env: "string" }
} as const
