/** `dlsync login`: sign in with the OAuth device flow (commands/login.ts). */
import { Command } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const loginCommand = Command.make(
  "login",
  {},
  onDemand(
    () => import("../commands/login.ts"),
    (command) => command.login()
  )
).pipe(Command.withDescription("Sign in with the OAuth device flow (enables per-file progress in app state)"))
