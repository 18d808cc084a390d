/** `dlsync config check [--online]`: validate the configuration (commands/configCheck.ts). */
import { Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

const check = Command.make(
  "check",
  {
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print the effective configuration as JSON"),
      Flag.withDefault(false)
    ),
    online: Flag.Boolean("online").pipe(
      Flag.withDescription("Also reach the service with the credential (one request)"),
      Flag.withDefault(false)
    )
  },
  onDemand(
    () => import("../commands/configCheck.ts"),
    (command, flags) => command.configCheck(flags)
  )
).pipe(Command.withDescription("Validate the configuration and print the effective settings (secrets redacted)"))

export const configCommand = Command.make("config").pipe(
  Command.withDescription("Inspect the configuration"),
  Command.withSubcommands([check])
)
