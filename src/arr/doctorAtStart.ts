/**
 * The path doctor once at daemon start (pathDoctor.ts), when one of `[sonarr]`, `[radarr]`, `[lidarr]`, `[readarr]` is
 * configured: each OK is an info line, each mismatch (with its fix) and each app that cannot
 * be checked a warning. It runs behind the daemon's start and never stops it.
 * Categories: the qBittorrent surface's (when the intake queue is there), and `sabnzbd.categories`.
 */
import { Effect, Layer, Option } from "effect"
import { Intake } from "../intake/Intake.ts"
import { Outbound } from "../outbound/Outbound.ts"
import { configuredApps } from "./ArrApp.ts"
import { type DoctorConfig, runDoctor } from "./runDoctor.ts"

export const doctorAtStartLayer = (config: DoctorConfig): Layer.Layer<never> => {
  if (configuredApps(config).length === 0) return Layer.empty
  return Layer.effectDiscard(
    Effect.gen(function* () {
      const intake = yield* Effect.serviceOption(Intake)
      const fromIntake = Option.isSome(intake) ? (yield* intake.value.categories("qbittorrent")).map((c) => c.name) : []
      const doctor = Effect.gen(function* () {
        const report = yield* runDoctor(config, [...new Set([...fromIntake, ...config.sabnzbd.categories])])
        for (const line of report.lines) {
          yield* line.ok ? Effect.logInfo(`path doctor: ${line.text}`) : Effect.logWarning(`path doctor: ${line.text}`)
        }
        for (const problem of report.problems) yield* Effect.logWarning(`path doctor: ${problem.text}`)
      })
      yield* Effect.forkScoped(doctor)
    })
  ).pipe(Layer.provide(Outbound.layer))
}
