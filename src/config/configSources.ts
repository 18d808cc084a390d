/**
 * Where the configuration's values come from: the TOML file (found by --config,
 * $DLSYNC_CONFIG, the XDG config dir or /etc/dlsync), laid under `DLSYNC_<SECTION>_<KEY>`
 * variables, and the place of each value (`file:line` or the variable) for the messages
 * that name it.
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, Option, type PlatformError, Predicate } from "effect"
import { closest, distance } from "fastest-levenshtein"
import { parse as parseToml, TomlError } from "smol-toml"
import { ConfigError, type ConfigProblem, configError } from "./ConfigError.ts"
import { type EnvKind, isSecretField, type SectionName, sectionNames, sections } from "./fields.ts"

export type Env = Readonly<Record<string, string | undefined>>

/** A key the file sets and a variable sets again: the variable's value is the one used. */
export interface EnvOverride {
  readonly key: string
  readonly variable: string
  /** Where the file sets it (`file:line`). */
  readonly fileSource: string
}

/** Where values came from, to name the place of a problem. */
export interface Origins {
  readonly file: string | undefined
  readonly text: string
  /** "section.key" → the variable that set it. */
  readonly fromEnv: ReadonlyMap<string, string>
}

/** The files searched, in order, when neither --config nor $DLSYNC_CONFIG names one. */
export const defaultConfigPaths = (env: Env): ReadonlyArray<string> => [
  NodePath.join(env.XDG_CONFIG_HOME || NodePath.join(env.HOME ?? "/", ".config"), "dlsync", "config.toml"),
  "/etc/dlsync/config.toml"
]

/** The environment variable that overrides `section.key`. */
export const envName = (section: string, key: string): string => `DLSYNC_${section}_${key}`.toUpperCase()

/** The file named by --config or $DLSYNC_CONFIG (which must exist), else the first default found. */
export const findConfigFile = Effect.fnUntraced(function* (path: Option.Option<string>, env: Env) {
  const fs = yield* FileSystem.FileSystem
  const explicit = Option.isSome(path) ? path.value : env.DLSYNC_CONFIG
  if (explicit !== undefined && explicit !== "") {
    const absolute = NodePath.resolve(explicit)
    const exists = yield* fs.exists(absolute).pipe(Effect.orElseSucceed(() => false))
    if (!exists)
      return yield* configError("", `${absolute} does not exist`, Option.isSome(path) ? "--config" : "DLSYNC_CONFIG")
    return absolute
  }
  for (const candidate of defaultConfigPaths(env)) {
    if (yield* fs.exists(candidate).pipe(Effect.orElseSucceed(() => false))) return candidate
  }
  return undefined
})

/** A file's text; failing, the problem names the key that led to the file and where it is set (none for the configuration itself). */
export const readText = (fs: FileSystem.FileSystem, file: string, key = "", source = "") =>
  fs
    .readFileString(file)
    .pipe(Effect.mapError((e) => configError(key, `cannot read ${file}: ${fileProblem(e)}`, source)))

/** Why a file could not be read, in words. */
export const fileProblem = (error: PlatformError.PlatformError): string => {
  const reason = error.reason
  if (reason._tag === "NotFound") return "no such file"
  if (reason._tag === "PermissionDenied") return "permission denied (it must be readable by the user dlsync runs as)"
  if (reason._tag === "BadArgument") return reason.description ?? "not a file"
  return reason.description ?? reason._tag
}

export const parseFile = (text: string, file: string): Effect.Effect<Record<string, unknown>, ConfigError> =>
  Effect.try({
    try: () => parseToml(text),
    catch: (e) =>
      e instanceof TomlError
        ? configError("", e.message.split("\n")[0] ?? "invalid TOML", `${file}:${e.line}`)
        : configError("", String(e), file)
  })

/**
 * Lays the environment over the file's values. `fromEnv` records which keys came from
 * the environment so that errors name the variable; `overrides` those the file set too.
 * A `DLSYNC_*` variable that names no key is an error: a typo must not pass silently.
 */
export const overlayEnv = (
  fromFile: Record<string, unknown>,
  env: Env,
  file: { readonly path: string | undefined; readonly text: string }
): Effect.Effect<
  {
    readonly values: Record<string, unknown>
    readonly fromEnv: Map<string, string>
    readonly overrides: ReadonlyArray<EnvOverride>
  },
  ConfigError
> =>
  Effect.gen(function* () {
    const values: Record<string, unknown> = { ...fromFile }
    const fromEnv = new Map<string, string>()
    const overrides: Array<EnvOverride> = []
    const known = new Map<string, [SectionName, string, EnvKind]>()
    for (const section of sectionNames) {
      for (const [key, f] of Object.entries(sections[section])) known.set(envName(section, key), [section, key, f.env])
    }
    const problems: Array<ConfigProblem> = []
    for (const [name, raw] of Object.entries(env)) {
      if (!name.startsWith("DLSYNC_") || NON_KEY_VARIABLES.has(name) || raw === undefined) continue
      const target = known.get(name)
      if (target === undefined) {
        const suggestion = suggest(name, [...known.keys()])
        const hint = suggestion === undefined ? "" : `; did you mean ${suggestion}?`
        problems.push({
          key: name,
          message: `not a dlsync setting${hint} (see config.example.toml)`,
          source: "environment"
        })
        continue
      }
      const [section, key, kind] = target
      const parsed = parseEnvValue(raw, kind)
      if (parsed === undefined) {
        problems.push({
          key: `${section}.${key}`,
          message: isSecretField([section, key]) ? `expected ${kind}` : `expected ${kind}, got ${JSON.stringify(raw)}`,
          source: name
        })
        continue
      }
      const current = values[section]
      const sectionValues = Predicate.isObject(current) ? current : {}
      if (file.path !== undefined && Predicate.hasProperty(sectionValues, key)) {
        const line = findLine(file.text, `${section}.${key}`)
        overrides.push({ key: `${section}.${key}`, variable: name, fileSource: `${file.path}:${line ?? "?"}` })
      }
      values[section] = { ...sectionValues, [key]: parsed }
      fromEnv.set(`${section}.${key}`, name)
    }
    if (problems.length > 0) return yield* new ConfigError({ problems })
    return { values, fromEnv, overrides }
  })

/** Where `key` was set: its variable, or `file:line`. */
export const sourceOf = (key: string, origins: Origins): string => {
  const variable = origins.fromEnv.get(key)
  if (variable !== undefined) return variable
  if (origins.file === undefined) return "environment"
  const line = findLine(origins.text, key)
  return line === undefined ? origins.file : `${origins.file}:${line}`
}

/**
 * The 1-based line of `key = …` inside `[section]` of a TOML text, if it is there; for an
 * array of tables, `section.N.key` is the key inside the N-th (from 0) `[[section]]`; a
 * bare `section` is its header's line.
 */
export const findLine = (text: string, dotted: string): number | undefined => {
  const parts = dotted.split(".")
  const entry = parts.length >= 2 && /^\d+$/.test(parts[1]!) ? Number(parts[1]) : undefined
  if (entry !== undefined) return lineIn(text, `${parts[0]}#${entry}`, parts[2])
  // `categories.tv.selection`: the key `selection` of `[categories.tv]`; else the section's header.
  if (parts.length > 2) return lineIn(text, parts.slice(0, -1).join("."), parts.at(-1))
  return lineIn(text, parts[0]!, parts[1]) ?? (parts.length === 2 ? lineIn(text, dotted, undefined) : undefined)
}

/** The line of `key = …` in the section (`name#N` for the N-th `[[name]]`), or of its header without a key. */
const lineIn = (text: string, section: string, key: string | undefined): number | undefined => {
  const lines = text.split("\n")
  const seen = new Map<string, number>()
  let current = ""
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    const header = /^\[(\[?)\s*([^\]\s]+)\s*\]/.exec(line)
    if (header) {
      current = header[2]!.replace(/"/g, "")
      if (header[1] === "[") {
        const n = seen.get(current) ?? 0
        seen.set(current, n + 1)
        current = `${current}#${n}`
      }
      if (key === undefined && current === section) return i + 1
      continue
    }
    if (key !== undefined && current === section && new RegExp(`^"?${escapeRegExp(key)}"?\\s*=`).test(line)) {
      return i + 1
    }
  }
  return undefined
}

/**
 * The candidate closest to a mistyped name, when it is close enough to be what was meant:
 * one edit away for a short name, two (a swap of two letters) from five letters on.
 */
export const suggest = (name: string, candidates: ReadonlyArray<string>): string | undefined => {
  if (candidates.length === 0) return undefined
  const best = closest(name, candidates)
  return distance(name, best) <= (name.length < 5 ? 1 : 2) ? best : undefined
}

// ---------------------------------------------------------------------------------------

/** Environment variables that are not config keys but are dlsync's own. */
const NON_KEY_VARIABLES = new Set(["DLSYNC_CONFIG"])

const parseEnvValue = (raw: string, kind: EnvKind): unknown => {
  switch (kind) {
    case "string":
      return raw
    case "integer":
      return /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : undefined
    case "boolean": {
      const v = raw.trim().toLowerCase()
      return ["1", "true", "yes", "on"].includes(v) ? true : ["0", "false", "no", "off"].includes(v) ? false : undefined
    }
    case "list":
      return raw
        .split(/[,\s]+/)
        .map((s) => s.trim())
        .filter((s) => s !== "")
    case "json":
      try {
        return JSON.parse(raw)
      } catch {
        return undefined
      }
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
