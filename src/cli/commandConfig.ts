import { Effect } from "effect"
import { loadConfig } from "../config/loadConfig.ts"
import { root } from "./root.ts"

/** The configuration for the running command: its --config flag, the environment, the cwd. */
export const commandConfig = Effect.gen(function* () {
  const { config } = yield* root
  return yield* loadConfig({ path: config, env: process.env, cwd: process.cwd() })
})
