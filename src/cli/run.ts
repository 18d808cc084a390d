/**
 * `dlsync run [--once] [--allow-big-delete]`: the daemon, or one pass for cron
 * (commands/run.ts). `dlsync --once` is the same as `dlsync run --once` (main.ts rewrites it).
 */
import { Command, Flag } from "effect/cli"
import { onDemand } from "./onDemand.ts"

export const runCommand = Command.make(
  "run",
  {
    once: Flag.Boolean("once").pipe(
      Flag.withDescription("One pass, then exit (for cron): 0 when the mirror matches, 1 when items failed"),
      Flag.withDefault(false)
    ),
    allowBigDelete: Flag.Boolean("allow-big-delete").pipe(
      Flag.withDescription("With --once: carry out a removal held by the big-delete limit (mirror.max_delete)"),
      Flag.withDefault(false)
    )
  },
  onDemand(
    () => import("../commands/run.ts"),
    (command, flags) => command.run(flags)
  )
).pipe(
  Command.withDescription(
    "Keep the mirror in line with the account (daemon; SIGHUP or SIGUSR1 polls at once), or one pass with --once"
  )
)

/**
 * `dlsync --once …` is `dlsync run --once …`. effect/cli runs a root command's own handler
 * only when no subcommand is named, and the root's flags are shared with every
 * subcommand, so the shortcut is an argument rewrite before parsing: `--once` with no
 * subcommand named becomes `run --once`.
 */
export const onceShortcut = (args: ReadonlyArray<string>, subcommands: ReadonlyArray<string>): ReadonlyArray<string> =>
  args.includes("--once") && !args.some((a) => subcommands.includes(a)) ? ["run", ...args] : args
