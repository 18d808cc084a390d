/**
 * `dlsync config check [--online]` (cli/config.ts): validates the configuration, checks what
 * `run` needs (runPrerequisites.ts; with --online, one request to the service with the
 * credential) and prints the effective settings, secrets redacted. Any problem: exit 78
 * (77, 75 for a refused credential or an unreachable service with --online).
 */
import { Console, Effect, Layer, Option, Predicate } from "effect"
import { stringify as stringifyToml } from "smol-toml"
import { ApiClient } from "../api/ApiClient.ts"
import { ApiObserver } from "../api/ApiHttp.ts"
import { commandConfig } from "../cli/commandConfig.ts"
import { ConfigError } from "../config/ConfigError.ts"
import { configNotices } from "../config/configNotices.ts"
import { effectiveView } from "../config/effectiveView.ts"
import { apiLayer } from "../layers/service.ts"
import { checkRunPrerequisites } from "./runPrerequisites.ts"

export const configCheck = Effect.fn("config.check")(function* ({
  json,
  online
}: {
  readonly json: boolean
  readonly online: boolean
}) {
  const config = yield* commandConfig
  const { problems, credential } = yield* checkRunPrerequisites(config)
  if (problems.length > 0) return yield* new ConfigError({ problems })
  const account = online
    ? Option.some(
        yield* ApiClient.use((client) => client.account.get).pipe(
          Effect.provide(apiLayer(config).pipe(Layer.provide(ApiObserver.none)))
        )
      )
    : Option.none()
  const view = effectiveView(config)
  if (json) {
    yield* Console.log(JSON.stringify(view, null, 2))
    return
  }
  yield* Console.log(`# configuration OK (${config.file ?? "from the environment only"})`)
  yield* Console.log(
    `# mirror root and state directory writable; credential: ${Option.getOrElse(credential, () => "none")}`
  )
  if (Option.isSome(account)) {
    yield* Console.log(`# service reached: signed in as ${account.value.name} <${account.value.email}>`)
  }
  for (const notice of configNotices(config)) yield* Console.log(`# note: ${notice}`)
  yield* Console.log(`\n${settingsToml(view.settings)}`)
})

/**
 * The effective settings as TOML (the form of config.toml): a key not set is a comment,
 * `[[hooks]]` and `[[notify]]` are arrays of tables.
 */
export const settingsToml = (settings: Readonly<Record<string, unknown>>): string =>
  Object.entries(settings)
    .map(([section, values]) => {
      if (Array.isArray(values)) return stringifyToml({ [section]: values }).trim()
      const entries = Object.entries(Predicate.isObject(values) ? values : {})
      const set = Object.fromEntries(entries.filter(([, value]) => value !== null))
      const unset = entries.filter(([, value]) => value === null).map(([key]) => `# ${key}: not set`)
      return [`[${section}]`, stringifyToml(set).trim(), ...unset].filter((line) => line !== "").join("\n")
    })
    .join("\n\n")
