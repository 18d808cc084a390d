/**
 * How a configuration key is optional, written into its schema so that the decoded
 * configuration (fields.ts' `ConfigSchema.Type`) carries every default: a key left out
 * decodes to its default (`defaulted`), to null (`orNull`), or stays absent (`optional`,
 * where being absent means something, as a section that turns a feature on).
 */
import { Effect, Option, Schema, SchemaGetter } from "effect"

/** Absent in the file: decodes to `value`. What is written is checked by `schema` as before. */
export const defaulted = <S extends Schema.Top>(schema: S, value: S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(value)))

/** Absent in the file: decodes to the value `make` gives at load (the host name, say). */
export const defaultedBy = <S extends Schema.Top>(schema: S, make: () => S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultTypeKey(Effect.sync(make)))

/** Absent in the file: decodes to null ("no limit"). */
export const orNull = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema).pipe(
    Schema.decodeTo(Schema.NullOr(Schema.toType(schema)), {
      decode: SchemaGetter.transformOptional((value) => Option.some(Option.getOrNull(value))),
      encode: SchemaGetter.transformOptional((value) => Option.flatMap(value, Option.fromNullishOr))
    })
  )

/** Absent in the file: stays absent. */
export const optional = Schema.optionalKey

/** A section whose keys all have defaults: absent, it decodes as `empty` (`{}`) does, to those defaults. */
export const defaultedSection = <S extends Schema.Top>(section: S, empty: S["Encoded"]) =>
  section.pipe(Schema.withDecodingDefaultKey(Effect.succeed(empty)))

export const NonEmpty = Schema.String.pipe(Schema.check(Schema.isMinLength(1)))
