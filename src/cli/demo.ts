/** `dlsync demo`: the main job against the built-in emulator, step by step (commands/demo.ts). */
import { Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const demoCommand = Command.make(
  "demo",
  {
    keep: Flag.String("dir").pipe(
      Flag.withDescription("Mirror into this folder (default: a fresh temporary folder)"),
      Flag.withMetavar("DIR"),
      Flag.optional
    )
  },
  onDemand(
    () => import("../commands/demo.ts"),
    (command, flags) => command.demo(flags)
  )
).pipe(Command.withDescription("Run the main job against the built-in emulator and show each step"))
