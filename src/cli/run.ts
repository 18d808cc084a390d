/**
 * `dlsync run [--once] [--allow-big-delete]`: the daemon, or one pass for cron
 * (commands/run.ts). `dlsync --once` is the same as `dlsync run --once` (main.ts rewrites it).
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { configNotices } from "../config/configNotices.ts"
import { commandConfig } from "./commandConfig.ts"
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
    (command, flags) =>
      Effect.andThen(
        warnNotices,
        // A signal ends the daemon: the last line says it ended, after its shutdown's own.
        flags.once ? command.run(flags) : command.run(flags).pipe(Effect.onInterrupt(() => Effect.logInfo("stopped")))
      )
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

/** What the configuration does that its author may not expect (config/configNotices.ts), as warnings at start. */
const warnNotices = Effect.flatMap(commandConfig, (config) =>
  Effect.forEach(configNotices(config), (notice) => Effect.logWarning(notice), { discard: true })
)
