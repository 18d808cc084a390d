/**
 * Supported source services (GET /services). Field names of a service entry are not
 * shown, so entries are kept verbatim apart from `url_patterns`.
 */
import { Schema } from "effect"

/** A regular expression as a source string and flags, for `new RegExp(source, flags)`. */
export const UrlPattern = Schema.StructWithRest(Schema.Struct({ source: Schema.String, flags: Schema.String }), [
  Schema.Record(Schema.String, Schema.Unknown)
])
export type UrlPattern = typeof UrlPattern.Type

export const Service = Schema.StructWithRest(
  Schema.Struct({ url_patterns: Schema.optionalKey(Schema.Array(UrlPattern)) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type Service = typeof Service.Type

export const ServiceList = Schema.Struct({
  data: Schema.Array(Service),
  meta: Schema.optionalKey(
    Schema.StructWithRest(Schema.Struct({ pattern_version: Schema.optionalKey(Schema.Unknown) }), [
      Schema.Record(Schema.String, Schema.Unknown)
    ])
  )
})
export type ServiceList = typeof ServiceList.Type
