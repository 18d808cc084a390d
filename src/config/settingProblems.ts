/**
 * Settings that decode but cannot work: intervals that would flood the service, folder
 * selections that climb out of the account, patterns that can match nothing, a state
 * directory inside the mirror it describes. Each is a configuration error (exit 78) at
 * load, so `run` and `config check` refuse it alike, rather than a run that mirrors
 * nothing and exits 0.
 */
import * as NodePath from "node:path"
import { isBelow } from "../fs/containment.ts"
import { formatDuration } from "./units.ts"

/** A problem with one key; the loader adds where the key was set. */
export interface SettingProblem {
  readonly key: string
  readonly message: string
}

/** Every poll is a request to the service. */
export const MIN_POLL_INTERVAL_MS = 1_000

/** A full listing reads the whole account. */
export const MIN_LISTING_INTERVAL_MS = 60_000

export const settingProblems = (config: {
  readonly mirror: {
    readonly root: string
    readonly state_dir: string
    readonly folders: ReadonlyArray<string>
    readonly include: ReadonlyArray<string>
    readonly exclude: ReadonlyArray<string>
  }
  readonly sync: { readonly poll_interval: number; readonly listing_interval: number }
}): ReadonlyArray<SettingProblem> => {
  const problems: Array<SettingProblem> = []
  const atLeast = (key: string, millis: number, minimum: number, why: string) => {
    if (millis < minimum) {
      problems.push({
        key,
        message: `${formatDuration(millis)} is too short: at least ${formatDuration(minimum)} (${why})`
      })
    }
  }
  atLeast("sync.poll_interval", config.sync.poll_interval, MIN_POLL_INTERVAL_MS, "every poll is a request")
  atLeast(
    "sync.listing_interval",
    config.sync.listing_interval,
    MIN_LISTING_INTERVAL_MS,
    "a full listing reads the whole account"
  )
  for (const folder of config.mirror.folders) {
    const problem = folderProblem(folder)
    if (problem !== undefined) problems.push({ key: "mirror.folders", message: problem })
  }
  for (const key of ["include", "exclude"] as const) {
    for (const pattern of config.mirror[key]) {
      const problem = patternProblem(pattern)
      if (problem !== undefined) problems.push({ key: `mirror.${key}`, message: problem })
    }
  }
  const { root, state_dir } = config.mirror
  if (isSameOrInside(state_dir, root)) {
    problems.push({
      key: "mirror.state_dir",
      message: `${state_dir} is ${state_dir === root ? "the mirror root" : `inside the mirror root ${root}`}; put the state outside it (the mirror holds only the account's files)`
    })
  }
  return problems
}

/** Why a `mirror.folders` entry names no folder below the account root, if it does not. */
export const folderProblem = (folder: string): string | undefined => {
  const parts = folder.split("/").filter((p) => p !== "")
  if (parts.length === 0) return `${JSON.stringify(folder)} names no folder (leave mirror.folders empty to mirror all)`
  if (parts.some((p) => p === "." || p === "..")) {
    return `${JSON.stringify(folder)}: write a folder below the account root without "." or ".." (e.g. "Movies/Action")`
  }
  return undefined
}

/** Why a glob pattern of `mirror.include` / `mirror.exclude` is malformed, if it is. */
export const patternProblem = (pattern: string): string | undefined => {
  let bracket = false
  let braces = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") {
      i++
    } else if (bracket) {
      if (c === "]") bracket = false
    } else if (c === "[") {
      bracket = true
      // "[]…]" and "[!]…]": a "]" first in the class is part of it.
      if (pattern[i + 1] === "!" || pattern[i + 1] === "^") i++
      if (pattern[i + 1] === "]") i++
    } else if (c === "{") {
      braces++
    } else if (c === "}") {
      if (braces === 0) return `${JSON.stringify(pattern)}: "}" without "{" (write \\} for a literal brace)`
      braces--
    }
  }
  if (bracket) return `${JSON.stringify(pattern)}: "[" without a closing "]" (write \\[ for a literal bracket)`
  if (braces > 0) return `${JSON.stringify(pattern)}: "{" without a closing "}" (write \\{ for a literal brace)`
  return undefined
}

const isSameOrInside = (path: string, dir: string): boolean => NodePath.relative(dir, path) === "" || isBelow(dir, path)
