import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import type { AppConfig } from "../config/loadConfig.ts"
import { commandConfig } from "./commandConfig.ts"

/** `dlsync config check`: validate the configuration and print it, secrets redacted. */
const check = Command.make(
  "check",
  {
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print the effective configuration as JSON"),
      Flag.withDefault(false)
    )
  },
  Effect.fn("config.check")(function* ({ json }) {
    const config = yield* commandConfig
    const view = effectiveView(config)
    if (json) {
      yield* Console.log(JSON.stringify(view, null, 2))
      return
    }
    yield* Console.log(`# configuration OK (${config.file ?? "from the environment only"})`)
    for (const [section, values] of Object.entries(view.settings)) {
      yield* Console.log(`\n[${section}]`)
      for (const [key, value] of Object.entries(values)) yield* Console.log(`${key} = ${JSON.stringify(value)}`)
    }
  })
).pipe(Command.withDescription("Validate the configuration and print the effective settings (secrets redacted)"))

export const configCommand = Command.make("config").pipe(
  Command.withDescription("Inspect the configuration"),
  Command.withSubcommands([check])
)

/** The printable form of a configuration: every secret replaced by a marker. */
export const effectiveView = (config: AppConfig) => ({
  file: config.file ?? null,
  settings: {
    service: {
      base_url: config.service.base_url,
      auth_url: config.service.auth_url,
      api_key: Option.isSome(config.service.api_key) ? "<redacted>" : null,
      client_id: Option.getOrNull(config.service.client_id),
      scopes: config.service.scopes
    },
    mirror: { root: config.mirror.root, state_dir: config.mirror.state_dir }
  }
})
