/**
 * The `[categories.<name>]` sections: how the intake queue treats the releases of one
 * category (a folder under the mirror root). Names are the user's, so the section is a map
 * rather than fixed keys: it is decoded here and has no environment overrides.
 *
 *   [categories.tv]
 *   selection = "largest"          # "all" (default) | "largest" | "video" | ["*.mkv", …]
 *   cached_only = true             # only torrents the service has cached (default false)
 */
import { Schema } from "effect"
import { defaulted } from "./keySchemas.ts"

/** Which item a selection stage is answered with (see src/intake/selectionPolicy.ts). */
export type SelectionPolicy = "all" | "largest" | "video" | ReadonlyArray<string>

const CategorySection = Schema.Struct({
  selection: defaulted(
    Schema.Union([
      Schema.Literals(["all", "largest", "video"]),
      Schema.Array(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))).pipe(Schema.check(Schema.isMinLength(1)))
    ]),
    "all"
  ),
  cached_only: defaulted(Schema.Boolean, false)
})

export const CategoriesSection = Schema.Record(Schema.String, CategorySection)

export type CategorySettings = typeof CategorySection.Type

/** A category without a section of its own: its keys' defaults. */
export const CATEGORY_DEFAULTS: CategorySettings = Schema.decodeUnknownSync(CategorySection)({})
