/** The path doctor over every configured app (pathDoctor.ts), summed up (doctorReport.ts). */
import { Effect } from "effect"
import type { ApiTransport } from "../api/ApiTransport.ts"
import type { ArrSettings } from "../config/arrSettings.ts"
import { configuredApps } from "./ArrApp.ts"
import { type DoctorReport, doctorReport } from "./doctorReport.ts"
import { checkAppPaths } from "./pathDoctor.ts"

/** Checks each app, one after the other, for its categories and `categories`; probes go under `root`. */
export const runDoctor = (
  config: ArrSettings,
  root: string,
  categories: ReadonlyArray<string>
): Effect.Effect<DoctorReport, never, ApiTransport> =>
  Effect.map(
    Effect.forEach(configuredApps(config), (target) => checkAppPaths(target, root, categories)),
    doctorReport
  )
