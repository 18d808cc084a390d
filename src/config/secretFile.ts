/**
 * A secret kept in a file of its own (`*_file` keys): the file holds the secret alone on one
 * line (a trailing newline is fine). Its content is never echoed in an error.
 */
import { Effect, type FileSystem, Redacted } from "effect"
import { type ConfigError, configError } from "./ConfigError.ts"
import { readText } from "./configSources.ts"

export const readSecretFile = (
  fs: FileSystem.FileSystem,
  key: string,
  file: string,
  source: string
): Effect.Effect<Redacted.Redacted<string>, ConfigError> =>
  readText(fs, file, key, source).pipe(
    Effect.flatMap((text) => {
      const secret = text.trim()
      if (secret === "") return Effect.fail(configError(key, `${file} is empty`, source))
      if (/[\r\n]/.test(secret)) {
        return Effect.fail(configError(key, `${file} holds more than one line; it must hold the secret alone`, source))
      }
      return Effect.succeed(Redacted.make(secret))
    })
  )
