/**
 * `dlsync doctor` (cli/doctor.ts): asks each configured app (arr/pathDoctor.ts) whether it
 * sees the files dlsync reports at the paths it reports them; prints OK or the `path_map` fix.
 */
import { Console, Effect, Schema } from "effect"
import { configuredApps } from "../arr/ArrApp.ts"
import { runDoctor } from "../arr/runDoctor.ts"
import { commandConfig } from "../cli/commandConfig.ts"
import { ConfigError, configError } from "../config/ConfigError.ts"
import { Outbound } from "../outbound/Outbound.ts"

/** An app did not answer: try again once it runs (exit 75). */
export class AppUnreachable extends Schema.TaggedError<AppUnreachable>()("AppUnreachable", {
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return this.problems.join("\n")
  }
}

/** Some category is not seen where dlsync reports it (exit 1); the fixes were printed. */
export class PathsNotSeen extends Schema.TaggedError<PathsNotSeen>()("PathsNotSeen", { count: Schema.Int }) {
  override get message(): string {
    return `${this.count === 1 ? "1 category is" : `${this.count} categories are`} not seen by the app where dlsync reports it (the fix is above)`
  }
}

export const doctor = Effect.fn("doctor")(function* () {
  const config = yield* commandConfig
  if (configuredApps(config).length === 0) {
    return yield* configError(
      "sonarr",
      "no app to check: set [sonarr], [radarr], [lidarr] or [readarr] url and api_key (the doctor asks the app through its API)",
      config.file ?? "environment"
    )
  }
  const report = yield* runDoctor(config, config.sabnzbd.categories).pipe(Effect.provide(Outbound.layer))
  for (const line of report.lines) yield* Console.log(line.text)
  const config78 = report.problems.filter((p) => p.outcome === "config")
  const unreachable = report.problems.filter((p) => p.outcome === "unreachable")
  switch (report.outcome) {
    case "ok":
      return
    case "mismatch":
      return yield* new PathsNotSeen({ count: report.lines.filter((l) => !l.ok).length })
    case "unreachable":
      return yield* new AppUnreachable({ problems: unreachable.map((p) => p.text) })
    case "config":
      for (const p of unreachable) yield* Console.error(`dlsync: ${p.text}`)
      return yield* new ConfigError({ problems: config78.map((p) => ({ key: "", message: p.text, source: "" })) })
  }
})
