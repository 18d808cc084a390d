/**
 * What the daemon does with `[sonarr]`, `[radarr]`, `[lidarr]` and `[readarr]`: the path doctor once at start
 * (doctorAtStart.ts) and failed releases reported as they fail (FailedReports.ts). Nothing
 * when neither is configured.
 */
import { Layer } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"
import type { MirrorEvents } from "../events/MirrorEvents.ts"
import type { Database } from "../store/Database.ts"
import { doctorAtStartLayer } from "./doctorAtStart.ts"
import { failedReportsLayer } from "./FailedReports.ts"

export const arrLayer = (config: AppConfig): Layer.Layer<never, never, Database | MirrorEvents> =>
  Layer.merge(doctorAtStartLayer(config), failedReportsLayer(config))
