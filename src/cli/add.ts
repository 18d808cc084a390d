/**
 * `dlsync add <magnet|url|file…> [--category NAME]`: hands releases to the intake queue,
 * the same one the qBittorrent and SABnzbd surfaces and the blackhole folders feed; the
 * running `dlsync run` sends them (commands/add.ts).
 *
 * One line per argument: `added <name> (<id>) to category <c>`, `already present: …`, or
 * `cannot read <arg>: <why>`. Exit 0 · 1 when any argument failed · 64 usage.
 */
import { Argument, Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const addCommand = Command.make(
  "add",
  {
    sources: Argument.String("source").pipe(
      Argument.withDescription("A magnet link, an http(s) URL, or a .torrent, .nzb, .magnet or .url file"),
      Argument.atLeast(1)
    ),
    category: Flag.String("category").pipe(
      Flag.withDescription("The category: a folder under the mirror root (see [categories.<name>])"),
      Flag.withDefault("")
    )
  },
  onDemand(
    () => import("../commands/add.ts"),
    (command, input) => command.add(input)
  )
).pipe(Command.withDescription("Add magnets, URLs, torrent or NZB files to the intake queue (sent by `dlsync run`)"))
