/**
 * Building blocks shared by every resource schema: branded identifiers, the integer kinds
 * the spec uses, tolerant string enums, the pagination meta and the `data` envelope.
 *
 * Tolerance rule (spec, Versioning): unknown fields and unknown enum values pass. Enums
 * are therefore decoded as plain strings; the known literals are exported as constants.
 * A documented field of the wrong type fails, and the decoder's issue names its path.
 */
import { Schema } from "effect"

/** Identifier of a file or folder (opaque): the domain's, branded here and kept to the disk. */
export { FileId } from "../../domain/FileId.ts"

/** Identifier of a download (stable across attempts). */
export const DownloadId = Schema.String.pipe(Schema.brand("DownloadId"))
export type DownloadId = typeof DownloadId.Type

/** Identifier of a selection stage. */
export const SelectionId = Schema.String.pipe(Schema.brand("SelectionId"))
export type SelectionId = typeof SelectionId.Type

/** Opaque change-feed or list cursor: sent back exactly as received. */
export const Cursor = Schema.String.pipe(Schema.brand("Cursor"))
export type Cursor = typeof Cursor.Type

/**
 * An integer JSON can carry exactly. The spec's int64 fields (sizes, durations, bitrates)
 * arrive through JSON.parse, which silently rounds anything beyond 2^53; such a value is
 * refused rather than used wrong.
 */
export const SafeInt = Schema.Number.check(
  Schema.makeFilter((n: number) => Number.isSafeInteger(n), { expected: "an integer within ±2^53" })
)

/** A non-negative safe integer (byte counts, milliseconds). */
export const NonNegativeInt = SafeInt.check(Schema.isGreaterThanOrEqualTo(0))

/** An RFC 3339 timestamp, kept as the service's text (compared by parsing, never as text). */
export const Timestamp = Schema.String

/** Any JSON value, for shapes the spec leaves "not shown". */
export const Json = Schema.Json
export type Json = typeof Json.Type

/** Extra, undocumented fields of records whose shape the spec does not show; kept verbatim. */
export const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

/** Pagination meta of every cursor-paginated list. */
export const PageMeta = Schema.Struct({
  next_cursor: Schema.NullOr(Cursor),
  has_more: Schema.Boolean
})
export type PageMeta = typeof PageMeta.Type

/** `{ data: A }`: the envelope of ordinary successful responses. */
export const DataEnvelope = <S extends Schema.Top>(data: S) => Schema.Struct({ data })

/** `{ data: A[], meta: PageMeta }`: one page of a cursor-paginated list. */
export const PageEnvelope = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), meta: PageMeta })
