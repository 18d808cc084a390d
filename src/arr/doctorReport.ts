/**
 * The path doctor's verdicts in words (pure): one line per app and category, OK or the exact
 * fix, and the outcome they add up to, for `dlsync doctor` (its exit code) and the daemon's
 * log at start.
 */
import type { PathMap } from "../paths/pathMap.ts"
import type { AppVerdict, CategoryVerdict } from "./pathDoctor.ts"

export interface DoctorLine {
  readonly ok: boolean
  readonly text: string
}

/**
 * `ok` every category seen · `mismatch` some category not seen where dlsync reports it ·
 * `unreachable` an app did not answer (or not as its API documents) · `config` an app refused
 * the key or the URL is not its API, or a probe could not be written.
 */
export type DoctorOutcome = "ok" | "mismatch" | "unreachable" | "config"

export interface DoctorReport {
  /** Per category of the apps that answered. */
  readonly lines: ReadonlyArray<DoctorLine>
  /** Why an app or a probe could not be checked, one line each. */
  readonly problems: ReadonlyArray<{ readonly outcome: "unreachable" | "config"; readonly text: string }>
  readonly outcome: DoctorOutcome
}

/** A surface that tells the apps paths (`qbittorrent`, `sabnzbd`) and its `path_map`. */
export interface PathSurface {
  readonly key: string
  readonly pathMap: PathMap
}

/** `surfaces`: those on; a fix names each whose `path_map` differs from it (they tell the app its paths). */
export const doctorReport = (
  verdicts: ReadonlyArray<AppVerdict>,
  surfaces: ReadonlyArray<PathSurface> = []
): DoctorReport => {
  const lines: Array<DoctorLine> = []
  const problems: Array<DoctorReport["problems"][number]> = []
  for (const verdict of verdicts) {
    const { app } = verdict.target
    if (verdict._tag === "Failed") {
      problems.push({
        outcome: verdict.error.reason === "refused" ? "config" : "unreachable",
        text: verdict.error.problem
      })
      continue
    }
    for (const category of verdict.categories) {
      const where = `${app.name} [${category.category === "" ? "mirror root" : category.category}]`
      if (category._tag === "ProbeFailed") {
        const text = `${app.name}: cannot write a probe: ${category.problem}`
        if (!problems.some((p) => p.text === text)) problems.push({ outcome: "config", text })
        continue
      }
      lines.push({
        ok: category._tag === "Seen",
        text: `${where}: ${describe(verdict.target.app.section, app.name, category, surfaces)}`
      })
    }
  }
  const outcome: DoctorOutcome = problems.some((p) => p.outcome === "config")
    ? "config"
    : problems.length > 0
      ? "unreachable"
      : lines.some((l) => !l.ok)
        ? "mismatch"
        : "ok"
  return { lines, problems, outcome }
}

/** A `path_map` value as it is written in TOML (and, the same text, as JSON in the environment). */
export const pathMapText = (map: ReadonlyArray<readonly [string, string]>): string =>
  `[${map.map(([local, seen]) => `[${JSON.stringify(local)}, ${JSON.stringify(seen)}]`).join(", ")}]`

// ---------------------------------------------------------------------------------------

const describe = (
  section: string,
  name: string,
  verdict: Exclude<CategoryVerdict, { _tag: "ProbeFailed" }>,
  surfaces: ReadonlyArray<PathSurface>
): string => {
  if (verdict._tag === "Seen") return `OK (${name} sees the files at ${verdict.appPath.replace(/[^\\/]*$/, "")})`
  const head = `${name} does not see ${verdict.probe} as ${verdict.appPath}`
  if (verdict.fix !== null) {
    const text = pathMapText(verdict.fix.pathMap)
    const others = surfaces.filter((s) => pathMapText(s.pathMap) !== text).map((s) => `${s.key}.path_map`)
    const also =
      others.length === 0 ? "" : ` (and ${others.join(" and ")} the same: ${name} is told its paths from there)`
    return `${head}; it sees it as ${verdict.fix.seenAt}: set ${section}.path_map = ${text}${also}`
  }
  const searched = verdict.known.length === 0 ? "" : ` (${verdict.known.join(", ")})`
  return (
    `${head}, nor below its root folders and remote path mappings${searched}: mount ${verdict.root} in ` +
    `${name}'s container (at the same path, nothing to map) or set ${section}.path_map = ` +
    `${pathMapText([[verdict.root, `<where ${name} sees it>`]])}`
  )
}
