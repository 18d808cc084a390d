/**
 * What the engine reads from the configuration, resolved once at the edge (main.ts).
 */
import { Context, Layer } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"

export interface EngineSettingsShape {
  /** Absolute path of the mirror root. */
  readonly root: string
  readonly stateDir: string
  /** The `[mirror]` section: the planner's policy comes from it (sync/planConfig.ts). */
  readonly mirror: AppConfig["mirror"]
  readonly trashDays: number
  /** Milliseconds. */
  readonly pollInterval: number
  /** Milliseconds. */
  readonly listingInterval: number
}

export class EngineSettings extends Context.Service<EngineSettings, EngineSettingsShape>()(
  "dlsync/engine/EngineSettings"
) {
  static readonly layer = (config: AppConfig): Layer.Layer<EngineSettings> =>
    Layer.succeed(EngineSettings, EngineSettings.of(settingsFrom(config)))
}

export const settingsFrom = (config: AppConfig): EngineSettingsShape => ({
  root: config.mirror.root,
  stateDir: config.mirror.state_dir,
  mirror: config.mirror,
  trashDays: config.mirror.trash_days,
  pollInterval: config.sync.poll_interval,
  listingInterval: config.sync.listing_interval
})
