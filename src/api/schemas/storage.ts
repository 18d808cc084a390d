/** Application storage items (GET/PUT /app-storage/{key}, GET /app-storage). */
import { Schema } from "effect"
import { Json, PageMeta, SafeInt } from "./common.ts"

/**
 * One item: its key, any JSON `value` (null, false, 0, "" and empty containers are real
 * values) and a numeric `version`. The ETag comes from the response header, not the body.
 */
export const StorageItem = Schema.StructWithRest(
  Schema.Struct({
    key: Schema.optionalKey(Schema.String),
    value: Json,
    version: Schema.optionalKey(SafeInt)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type StorageItem = typeof StorageItem.Type

/** The list answer; `meta.quota` is reported where available, pagination when present. */
export const StorageList = Schema.Struct({
  data: Schema.Array(StorageItem),
  meta: Schema.optionalKey(
    Schema.StructWithRest(
      Schema.Struct({
        quota: Schema.optionalKey(Schema.Unknown),
        next_cursor: Schema.optionalKey(PageMeta.fields.next_cursor),
        has_more: Schema.optionalKey(Schema.Boolean)
      }),
      [Schema.Record(Schema.String, Schema.Unknown)]
    )
  )
})
export type StorageList = typeof StorageList.Type
