import { Schema } from "effect"

/**
 * One problem with one key, located in the file (with its line) or in the environment; a
 * problem with the configuration as a whole (none found) has an empty key and source.
 */
export const ConfigProblem = Schema.Struct({
  key: Schema.String,
  message: Schema.String,
  source: Schema.String
})
export type ConfigProblem = typeof ConfigProblem.Type

/** The configuration cannot be used; the CLI exits 78 (EX_CONFIG) and prints every problem. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  problems: Schema.Array(ConfigProblem)
}) {
  override get message(): string {
    return this.problems.map((p) => [p.source, p.key, p.message].filter((part) => part !== "").join(": ")).join("\n")
  }
}

export const configError = (key: string, message: string, source: string): ConfigError =>
  new ConfigError({ problems: [{ key, message, source }] })
