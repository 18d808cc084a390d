/** The engine settings of a status test: a mirror root and state dir in `stateDir`, no config file. */
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { loadConfig } from "../../src/config/loadConfig.ts"
import { settingsFrom } from "../../src/engine/EngineSettings.ts"

export const statusSettings = (stateDir: string) =>
  loadConfig({
    path: Option.none(),
    env: {
      HOME: stateDir,
      XDG_CONFIG_HOME: Path.join(stateDir, "no-config"),
      DLSYNC_SERVICE_BASE_URL: "http://127.0.0.1:9/api/v1",
      DLSYNC_MIRROR_ROOT: Path.join(stateDir, "mirror"),
      DLSYNC_MIRROR_STATE_DIR: stateDir
    },
    cwd: stateDir
  }).pipe(Effect.provide(NodeServices.layer), Effect.orDie, Effect.map(settingsFrom))
