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

/** Which item a selection stage is answered with (see src/intake/selectionPolicy.ts). */
export type SelectionPolicy = "all" | "largest" | "video" | ReadonlyArray<string>

export interface CategorySettings {
  readonly selection: SelectionPolicy
  readonly cached_only: boolean
}

export const CATEGORY_DEFAULTS: CategorySettings = { selection: "all", cached_only: false }

const CategorySection = Schema.Struct({
  selection: Schema.optionalKey(
    Schema.Union([
      Schema.Literals(["all", "largest", "video"]),
      Schema.Array(Schema.String.pipe(Schema.check(Schema.isMinLength(1)))).pipe(Schema.check(Schema.isMinLength(1)))
    ])
  ),
  cached_only: Schema.optionalKey(Schema.Boolean)
})

export const CategoriesSection = Schema.Record(Schema.String, CategorySection)

export const categoriesOf = (
  raw: typeof CategoriesSection.Type | undefined
): Readonly<Record<string, CategorySettings>> =>
  Object.fromEntries(Object.entries(raw ?? {}).map(([name, section]) => [name, { ...CATEGORY_DEFAULTS, ...section }]))
