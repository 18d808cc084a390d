import { Option, Schema } from "effect"
import { CliConfig, Command, Flag, GlobalFlag } from "effect/cli"
import { LogLevelSetting } from "../log/logLayer.ts"

/**
 * `--log-level`: the same names as `log.level` (trace, debug, info, warn, error, off), in
 * place of effect/cli's built-in flag, whose names differ ("none", "warning", "fatal").
 * main.ts reads its value ahead of the parser to set up the logger (`logLevelArgument`).
 */
export const logLevelFlag = GlobalFlag.Setting("log-level")({
  flag: Flag.Literals("log-level", LogLevelSetting.literals).pipe(
    Flag.optional,
    Flag.withDescription("The least severe log level written, overriding log.level"),
    Flag.withMetavar(LogLevelSetting.literals.join("|"))
  )
})

/**
 * effect/cli's settings for running `root`: its built-in global flags without its own
 * `--log-level` (which would clash with ours). Whoever runs `root` provides it.
 */
export const cliConfig = CliConfig.layer({
  builtIns: GlobalFlag.BuiltIns.filter((flag) => flag !== GlobalFlag.LogLevel)
})

/** `dlsync`: the root command; its shared flags are accepted by every subcommand. */
export const root = Command.make("dlsync").pipe(
  Command.withSharedFlags({
    config: Flag.String("config").pipe(
      Flag.withDescription(
        "Configuration file (default: $DLSYNC_CONFIG, $XDG_CONFIG_HOME/dlsync/config.toml, /etc/dlsync/config.toml)"
      ),
      Flag.withMetavar("FILE"),
      Flag.optional
    )
  }),
  Command.withGlobalFlags([logLevelFlag]),
  Command.withDescription(
    [
      "Keep a Download Service account mirrored on local disk.",
      "`dlsync --once` is short for `dlsync run --once`.",
      "Exit codes: 0 ok · 1 items failed or a deletion held · 64 usage · 70 internal error · 75 temporary (service unreachable, lock held) · 77 sign-in needed · 78 configuration."
    ].join("\n  ")
  )
)

/** The value of a global flag (`--name VALUE` / `--name=VALUE`), read ahead of the parser. */
export const flagArgument = (argv: ReadonlyArray<string>, name: string): Option.Option<string> => {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ""
    if (arg === "--") break
    if (arg.startsWith(`--${name}=`)) return Option.some(arg.slice(name.length + 3))
    if (arg === `--${name}` && i + 1 < argv.length) return Option.fromNullishOr(argv[i + 1])
  }
  return Option.none()
}

/** The `--log-level` given, when it is one of the accepted names (the parser rejects others). */
export const logLevelArgument = (argv: ReadonlyArray<string>): Option.Option<LogLevelSetting> =>
  Option.filter(flagArgument(argv, "log-level"), Schema.is(LogLevelSetting))
