/** The path doctor over every configured app (pathDoctor.ts), summed up (doctorReport.ts). */
import { Effect } from "effect"
import type { ArrSettings } from "../config/arrSettings.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import type { Outbound } from "../outbound/Outbound.ts"
import { configuredApps } from "./ArrApp.ts"
import { type DoctorReport, doctorReport, type PathSurface } from "./doctorReport.ts"
import { checkAppPaths } from "./pathDoctor.ts"

/** What the doctor reads of the configuration. */
export type DoctorConfig = ArrSettings &
  Pick<AppConfig, "qbittorrent" | "sabnzbd"> & { readonly mirror: { readonly root: string } }

/** Checks each app, one after the other, for its categories and `categories`; probes go under the mirror root. */
export const runDoctor = (
  config: DoctorConfig,
  categories: ReadonlyArray<string>
): Effect.Effect<DoctorReport, never, Outbound> =>
  Effect.map(
    Effect.forEach(configuredApps(config), (target) => checkAppPaths(target, config.mirror.root, categories)),
    (verdicts) => doctorReport(verdicts, pathSurfaces(config))
  )

/** The surfaces on, with their path_map. */
const pathSurfaces = (config: Pick<AppConfig, "qbittorrent" | "sabnzbd">): ReadonlyArray<PathSurface> => [
  ...(config.qbittorrent === null ? [] : [{ key: "qbittorrent", pathMap: config.qbittorrent.path_map }]),
  ...(config.sabnzbd.listen === "off" ? [] : [{ key: "sabnzbd", pathMap: config.sabnzbd.pathMap }])
]
