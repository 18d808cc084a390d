/**
 * The `[server]` section: where the daemon's HTTP endpoint (probes, metrics, status and the
 * web page, src/server/ and src/web/) listens, the host names it answers to, and the web
 * page's password, which it asks for when it listens beyond loopback: the one in
 * `password_file`, or the one `password_hash` was made from (scrypt, server/passwordHash.ts);
 * with neither, one generated at the first start (src/web/webPassword.ts). The keys' schemas
 * and defaults are `sections.server` in fields.ts; config.example.toml documents each.
 */
import { Effect, type Redacted, Schema } from "effect"
import type { ListenSetting } from "../server/ListenAddress.ts"
import { parsePasswordHash } from "../server/passwordHash.ts"
import type { ConfigError } from "./ConfigError.ts"
import type { DecodedConfig } from "./fields.ts"
import { NonEmpty } from "./keySchemas.ts"

/** The web page's password as configured; null: generated at the first start. */
export type WebPasswordSetting =
  | { readonly _tag: "Plain"; readonly password: Redacted.Redacted<string> }
  | { readonly _tag: "Hash"; readonly hash: Redacted.Redacted<string> }

export interface ServerSettings {
  readonly listen: ListenSetting
  readonly allowed_hosts: ReadonlyArray<string>
  readonly password: WebPasswordSetting | null
}

/** `server.password_hash`: a hash in the form server/passwordHash.ts reads. */
export const PasswordHashText = NonEmpty.pipe(
  Schema.check(
    Schema.makeFilter((text: string) => {
      const parsed = parsePasswordHash(text)
      return typeof parsed === "string" ? parsed : true
    })
  )
)

/** The settings; `readSecretFile` reads `password_file` (config/secretFile.ts). */
export const serverSettings = Effect.fnUntraced(function* (
  raw: DecodedConfig["server"],
  readSecretFile: (key: string, path: string) => Effect.Effect<Redacted.Redacted<string>, ConfigError>,
  problem: (key: string, message: string) => ConfigError
): Effect.fn.Return<ServerSettings, ConfigError> {
  const base = { listen: raw.listen, allowed_hosts: raw.allowed_hosts }
  if (raw.password_file !== undefined && raw.password_hash !== undefined) {
    return yield* problem("server.password_file", "set server.password_file or server.password_hash, not both")
  }
  if (raw.password_file !== undefined) {
    const password = yield* readSecretFile("server.password_file", raw.password_file)
    return { ...base, password: { _tag: "Plain", password } }
  }
  if (raw.password_hash !== undefined) return { ...base, password: { _tag: "Hash", hash: raw.password_hash } }
  return { ...base, password: null }
})
