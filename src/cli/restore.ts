/** `dlsync restore PATH`: bring back an item deleted locally (commands/restore.ts). */
import { Argument, Command } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const restoreCommand = Command.make(
  "restore",
  { path: Argument.String("path").pipe(Argument.withDescription("File or folder to bring back")) },
  onDemand(
    () => import("../commands/restore.ts"),
    (command, args) => command.restore(args)
  )
).pipe(Command.withDescription("Bring back a file or folder deleted locally (mirror.on_local_delete = respect)"))
