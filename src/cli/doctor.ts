/**
 * `dlsync doctor`: checks that Sonarr, Radarr, Lidarr and Readarr (`[sonarr]`, `[radarr]`, `[lidarr]`, `[readarr]`) see the files dlsync
 * reports at the paths it reports them (arr/pathDoctor.ts): per app and category, OK or the
 * exact `path_map` to set. Categories: those of the app's qBittorrent and SABnzbd download
 * clients, and `sabnzbd.categories`.
 *
 * Exit codes (main.ts): 0 every category seen · 1 some category not seen (the fix is printed)
 * · 75 an app cannot be reached · 78 no app configured, an API key refused, a URL that is not
 * the app's API, or a probe that cannot be written (a missing mirror root).
 */
import { Console, Effect, Schema } from "effect"
import { Command } from "effect/cli"
import { ApiTransport } from "../api/ApiTransport.ts"
import { configuredApps } from "../arr/ArrApp.ts"
import { runDoctor } from "../arr/runDoctor.ts"
import { ConfigError, configError } from "../config/ConfigError.ts"
import { commandConfig } from "./commandConfig.ts"

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

export const doctorCommand = Command.make(
  "doctor",
  {},
  Effect.fn("doctor")(function* () {
    const config = yield* commandConfig
    if (configuredApps(config).length === 0) {
      return yield* configError(
        "sonarr",
        "no app to check: set [sonarr], [radarr], [lidarr] or [readarr] url and api_key (the doctor asks the app through its API)",
        config.file ?? "environment"
      )
    }
    const report = yield* runDoctor(config, config.sabnzbd.categories).pipe(Effect.provide(ApiTransport.layerUndici))
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
).pipe(
  Command.withDescription(
    "Check that Sonarr, Radarr, Lidarr and Readarr see the files dlsync reports at the paths it reports them; print the path_map fix"
  )
)
