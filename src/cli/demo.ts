/** `dlsync demo`: the main job against the built-in emulator, step by step (commands/demo.ts). */
import { Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const demoCommand = Command.make(
  "demo",
  {
    dir: Flag.String("dir").pipe(
      Flag.withDescription(
        "Mirror into this folder, kept afterwards (default: a temporary folder, removed at the end)"
      ),
      Flag.withMetavar("DIR"),
      Flag.optional
    ),
    keep: Flag.Boolean("keep").pipe(
      Flag.withDescription("Keep the temporary folder (the mirror and its state) to look around in"),
      Flag.withDefault(false)
    )
  },
  onDemand(
    () => import("../commands/demo.ts"),
    (command, flags) => command.demo(flags)
  )
).pipe(Command.withDescription("Run the main job against the built-in emulator and show each step"))
