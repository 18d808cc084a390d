/**
 * The sections that act after a file lands: `[jellyfin]`, `[plex]` (media-server refresh),
 * `[[hooks]]` and `[[notify]]`, as the program uses them (the keys' schemas are in fields.ts),
 * with their defaults and the checks that need more than a schema (a hook's program must be
 * found). config.example.toml documents each key.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Duration, Redacted } from "effect"
import { notifyTarget, type TargetType } from "../domain/notifyTarget.ts"
import type { EventLevel, HookEventName } from "../events/MirrorEvent.ts"
import type { PathMap } from "../paths/pathMap.ts"
import type { ConfigSchema } from "./fields.ts"
import type { SettingProblem } from "./settingProblems.ts"
import { formatDuration } from "./units.ts"

export interface MediaServerSettings {
  readonly url: string
  /** Jellyfin's API key, or Plex's token. */
  readonly token: Redacted.Redacted<string>
  readonly path_map: PathMap
}

export interface HookSettings {
  readonly event: HookEventName
  /** argv: the program (absolute, or found on PATH when it names no folder) and its arguments. */
  readonly command: ReadonlyArray<string>
  /** Milliseconds. */
  readonly timeout: number
}

export interface NotifySettings {
  readonly url: Redacted.Redacted<string>
  /** Unset: told by the URL (notify/notifyTarget.ts). */
  readonly type: TargetType | undefined
  readonly events: ReadonlyArray<HookEventName>
  readonly level: EventLevel
  readonly secret: Redacted.Redacted<string> | null
}

export interface AfterLandingSettings {
  readonly jellyfin: MediaServerSettings | null
  readonly plex: MediaServerSettings | null
  readonly hooks: ReadonlyArray<HookSettings>
  readonly notify: ReadonlyArray<NotifySettings>
}

export const HOOK_TIMEOUT_DEFAULT_MS = 30_000

/** Failures (of files and of releases) and held deletions, not every file. */
export const NOTIFY_EVENTS_DEFAULT: ReadonlyArray<HookEventName> = ["file_failed", "release_failed", "deletion_held"]

type Raw = typeof ConfigSchema.Type

/**
 * The settings from the decoded file; `resolve` makes a relative hook program (one with a
 * `/`) absolute against the configuration's folder.
 */
export const afterLandingSettings = (raw: Raw, resolve: (key: string, p: string) => string): AfterLandingSettings => ({
  jellyfin:
    raw.jellyfin === undefined
      ? null
      : { url: trimUrl(raw.jellyfin.url), token: raw.jellyfin.api_key, path_map: raw.jellyfin.path_map ?? [] },
  plex:
    raw.plex === undefined
      ? null
      : { url: trimUrl(raw.plex.url), token: raw.plex.token, path_map: raw.plex.path_map ?? [] },
  hooks: (raw.hooks ?? []).map((h, i) => {
    const [program = "", ...args] = h.command
    return {
      event: h.event,
      command: [program.includes("/") ? resolve(`hooks.${i}.command`, program) : program, ...args],
      timeout: h.timeout === undefined ? HOOK_TIMEOUT_DEFAULT_MS : Duration.toMillis(h.timeout)
    }
  }),
  notify: (raw.notify ?? []).map((n) => ({
    url: n.url,
    type: n.type,
    events: n.events ?? NOTIFY_EVENTS_DEFAULT,
    level: n.level ?? "info",
    secret: n.secret ?? null
  }))
})

/** A hook whose program cannot be run: not found on PATH, or not an executable file. */
export const hookProblems = (hooks: ReadonlyArray<HookSettings>, pathVariable: string): ReadonlyArray<SettingProblem> =>
  hooks.flatMap((hook, i) => {
    const program = hook.command[0] ?? ""
    const found = program.includes("/")
      ? isExecutable(program)
      : pathVariable.split(":").some((dir) => dir !== "" && isExecutable(NodePath.join(dir, program)))
    if (found) return []
    const where = program.includes("/") ? "" : " on PATH"
    return [
      {
        key: `hooks.${i}.command`,
        message: `${program} is not an executable file${where}; give its absolute path or install it`
      }
    ]
  })

/** The printable form for `config check`: the sections configured, secrets redacted (a notification URL by its type and host). */
export const afterLandingView = (settings: AfterLandingSettings) => {
  const server = (s: MediaServerSettings | null, tokenKey: string) =>
    s === null ? {} : { url: s.url, [tokenKey]: "<redacted>", path_map: s.path_map }
  return {
    ...(settings.jellyfin === null ? {} : { jellyfin: server(settings.jellyfin, "api_key") }),
    ...(settings.plex === null ? {} : { plex: server(settings.plex, "token") }),
    ...(settings.hooks.length === 0
      ? {}
      : { hooks: settings.hooks.map((h) => ({ ...h, timeout: formatDuration(h.timeout) })) }),
    ...(settings.notify.length === 0
      ? {}
      : {
          notify: settings.notify.map((n) => ({
            url: `<redacted: ${notifyTarget(Redacted.value(n.url), n.type).name.replace(/^notify /, "")}>`,
            events: n.events,
            level: n.level,
            secret: n.secret === null ? null : "<redacted>"
          }))
        })
  }
}

const isExecutable = (file: string): boolean => {
  try {
    Fs.accessSync(file, Fs.constants.X_OK)
    return Fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const trimUrl = (url: string): string => url.replace(/\/+$/, "")
