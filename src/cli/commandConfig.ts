import { Context, Effect, type Exit, type FileSystem, Option } from "effect"
import type { ConfigError } from "../config/ConfigError.ts"
import { type AppConfig, loadConfig } from "../config/loadConfig.ts"
import { root } from "./root.ts"

/** Loads the configuration for a `--config` value: that file (or the usual places), the environment, the cwd. */
export type ConfigLoad = (path: Option.Option<string>) => Effect.Effect<AppConfig, ConfigError, FileSystem.FileSystem>

export const loadCommandConfig: ConfigLoad = (path) => loadConfig({ path, env: process.env, cwd: process.cwd() })

/**
 * How commands load the configuration. main.ts provides `loadOnce()`, shared with the
 * logger, so the configuration is read once; the default loads at each call.
 */
export const ConfigLoader = Context.Reference<ConfigLoad>("dlsync/cli/ConfigLoader", {
  defaultValue: () => loadCommandConfig
})

/**
 * Loads each `--config` value once and gives every later call the same outcome, errors
 * included. For one process: its environment and cwd are read at the first load.
 */
export const loadOnce = (): ConfigLoad => {
  const outcomes = new Map<string | undefined, Exit.Exit<AppConfig, ConfigError>>()
  return (path) =>
    Effect.suspend(() => {
      const key = Option.getOrUndefined(path)
      const known = outcomes.get(key)
      if (known !== undefined) return known
      return Effect.exit(loadCommandConfig(path)).pipe(
        Effect.tap((outcome) => Effect.sync(() => outcomes.set(key, outcome))),
        Effect.flatten
      )
    })
}

/** The configuration for the running command: its --config flag, the environment, the cwd. */
export const commandConfig = Effect.gen(function* () {
  const { config } = yield* root
  const load = yield* ConfigLoader
  return yield* load(config)
})
