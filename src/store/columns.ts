/** What every table group of the store shares: the time it stamps rows with, and counts. */
import { DateTime, Effect, Schema, SchemaTransformation } from "effect"

/** Rows are stamped with ISO-8601 UTC instants, taken from Effect's clock. */
export const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

/** The single row of a `SELECT count(*) AS n`. */
export const decodeCount = (raw: unknown): number => decodeCountRow(raw).n

const decodeCountRow = Schema.decodeUnknownSync(Schema.Struct({ n: Schema.Int }))

/**
 * A row schema whose columns, checked once by `columns`, decode to a `T` built by
 * `transformation`, with no second walk of the result: decoding straight to T's own schema
 * (`encodeKeys`, `decodeTo(T)`) checks every field again, which doubled the cost of
 * `remote.all` and `local.all`, read on every pass for every item.
 */
export const rowTo =
  <T>() =>
  <Columns extends Schema.Top>(
    columns: Columns,
    transformation: {
      readonly decode: (row: Columns["Type"]) => T
      readonly encode: (value: T) => Columns["Type"]
    }
  ) =>
    columns.pipe(Schema.decodeTo(Schema.declare(isBuilt<T>), SchemaTransformation.transform(transformation)))

const isBuilt = <T>(_: unknown): _ is T => true
