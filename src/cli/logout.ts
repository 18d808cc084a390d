/** `dlsync logout`: forget the stored OAuth tokens (commands/logout.ts). */
import { Command } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const logoutCommand = Command.make(
  "logout",
  {},
  onDemand(
    () => import("../commands/logout.ts"),
    (command) => command.logout()
  )
).pipe(Command.withDescription("Forget the OAuth tokens stored by `dlsync login`"))
