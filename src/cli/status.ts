/** `dlsync status [--json]`: what the store knows (commands/status.ts). */
import { Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const statusCommand = Command.make(
  "status",
  {
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print the status document as JSON"), Flag.withDefault(false))
  },
  onDemand(
    () => import("../commands/status.ts"),
    (command, flags) => command.status(flags)
  )
).pipe(
  Command.withDescription(
    "Show the mirror's state: mode, counts, active transfers, failures, held deletes, locally deleted items"
  )
)
