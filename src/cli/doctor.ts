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
import { Command } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const doctorCommand = Command.make(
  "doctor",
  {},
  onDemand(
    () => import("../commands/doctor.ts"),
    (command) => command.doctor()
  )
).pipe(
  Command.withDescription(
    "Check that Sonarr, Radarr, Lidarr and Readarr see the files dlsync reports at the paths it reports them; print the path_map fix"
  )
)
