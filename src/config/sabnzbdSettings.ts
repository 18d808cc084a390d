/**
 * The `[sabnzbd]` section as the program uses it (the keys' schemas are `sections.sabnzbd`
 * in fields.ts). The SABnzbd-compatible API is off unless an API key is configured (the apps
 * send it with every call); it then listens on `listen`, this host only by default.
 */
import { Effect, Option, type Redacted } from "effect"
import type { PathMap } from "../paths/pathMap.ts"
import type { ListenSetting } from "../server/ListenAddress.ts"
import type { ConfigError } from "./ConfigError.ts"
import { DEFAULT_PORTS, type DecodedConfig } from "./fields.ts"

export interface SabnzbdSettings {
  /** "off" when no API key is configured. */
  readonly listen: ListenSetting
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly pathMap: PathMap
  /** Categories the apps may use (besides the intake's own), made in the intake at start. */
  readonly categories: ReadonlyArray<string>
}

/** With an API key and no `listen`: this host only (fields.ts says why this port). */
export const DEFAULT_SABNZBD_LISTEN = { host: "127.0.0.1", port: DEFAULT_PORTS.sabnzbd } as const

export const SABNZBD_OFF: SabnzbdSettings = { listen: "off", apiKey: Option.none(), pathMap: [], categories: [] }

/** The settings from the decoded section; `readSecretFile` reads `api_key_file` (a path as written). */
export const sabnzbdSettings = Effect.fnUntraced(function* (
  raw: RawSabnzbd | undefined,
  io: {
    readonly readSecretFile: (key: string, path: string) => Effect.Effect<Redacted.Redacted<string>, ConfigError>
    readonly problem: (key: string, message: string) => ConfigError
  }
): Effect.fn.Return<SabnzbdSettings, ConfigError> {
  if (raw === undefined) return SABNZBD_OFF
  if (raw.api_key !== undefined && raw.api_key_file !== undefined) {
    return yield* io.problem("sabnzbd.api_key_file", "set sabnzbd.api_key or sabnzbd.api_key_file, not both")
  }
  const apiKey =
    raw.api_key_file === undefined
      ? Option.fromNullishOr(raw.api_key)
      : Option.some(yield* io.readSecretFile("sabnzbd.api_key_file", raw.api_key_file))
  const pathMap = raw.path_map
  if (Option.isNone(apiKey)) {
    if (raw.listen !== undefined && raw.listen !== "off") {
      return yield* io.problem(
        "sabnzbd.api_key",
        "required when sabnzbd.listen is set (the apps send it with every call): set api_key or api_key_file"
      )
    }
    return SABNZBD_OFF
  }
  return { listen: raw.listen ?? DEFAULT_SABNZBD_LISTEN, apiKey, pathMap, categories: raw.categories }
})

/** The section as decoded (fields.ts). */
type RawSabnzbd = NonNullable<DecodedConfig["sabnzbd"]>
