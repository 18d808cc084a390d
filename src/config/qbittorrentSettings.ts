/**
 * The `[qbittorrent]` section: the qBittorrent-compatible Web API the *arr apps use as their
 * download client (src/qbittorrent/). Off unless the section is there; on, it needs a user
 * name and a password (inline or in `password_file`), and listens on loopback unless told
 * otherwise. The keys' schemas and defaults are `sections.qbittorrent` in fields.ts;
 * config.example.toml documents each key and default.
 */
import * as NodePath from "node:path"
import { Effect, type Redacted } from "effect"
import type { ListenAddress } from "../server/ListenAddress.ts"
import type { ConfigError } from "./ConfigError.ts"
import type { DecodedConfig } from "./fields.ts"

/** The section when it is on. */
export interface QbittorrentSettings {
  readonly listen: ListenAddress
  readonly username: string
  readonly password: Redacted.Redacted<string>
  /** `[local prefix, prefix the app sees]` pairs, applied to every path the API reports. */
  readonly path_map: ReadonlyArray<readonly [string, string]>
}

/** The section as decoded by fields.ts. */
export type RawQbittorrentSection = NonNullable<DecodedConfig["qbittorrent"]>

/**
 * The settings, or null when the API is off (no section, or `listen = "off"`).
 * `readSecretFile` reads `password_file` (a path as written; config/secretFile.ts);
 * `problem` builds a ConfigError located at the key.
 */
export const qbittorrentSettings = Effect.fnUntraced(function* (
  raw: RawQbittorrentSection | undefined,
  readSecretFile: (key: string, path: string) => Effect.Effect<Redacted.Redacted<string>, ConfigError>,
  problem: (key: string, message: string) => ConfigError
): Effect.fn.Return<QbittorrentSettings | null, ConfigError> {
  if (raw === undefined || raw.listen === "off") return null
  if (raw.username === undefined) {
    return yield* problem(
      "qbittorrent.username",
      "set qbittorrent.username and qbittorrent.password (the *arr apps sign in with them), or remove [qbittorrent]"
    )
  }
  let password = raw.password
  if (raw.password_file !== undefined) {
    if (password !== undefined) {
      return yield* problem(
        "qbittorrent.password_file",
        "set qbittorrent.password or qbittorrent.password_file, not both"
      )
    }
    password = yield* readSecretFile("qbittorrent.password_file", raw.password_file)
  }
  if (password === undefined) {
    return yield* problem(
      "qbittorrent.password",
      "set qbittorrent.password or qbittorrent.password_file (the *arr apps sign in with it)"
    )
  }
  return {
    listen: raw.listen,
    username: raw.username,
    password,
    path_map: raw.path_map.map(([local, seen]) => [NodePath.normalize(local), seen] as const)
  }
})
