/** The public error envelope of operations under base_url. */
import { Schema } from "effect"

/** Error codes the spec names; the list is open. */
export const ERROR_CODES = { validationFailed: "validation_failed", cursorExpired: "cursor_expired" } as const

export const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.optionalKey(Schema.String),
    details: Schema.optionalKey(
      Schema.NullOr(
        Schema.StructWithRest(
          Schema.Struct({
            /** Request field name → messages. */
            fields: Schema.optionalKey(Schema.Record(Schema.String, Schema.Array(Schema.String)))
          }),
          [Schema.Record(Schema.String, Schema.Unknown)]
        )
      )
    )
  })
})
export type ErrorEnvelope = typeof ErrorEnvelope.Type
