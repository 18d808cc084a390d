import { Console, Layer, Option, Schema } from "effect"
import { CliConfig, CliOutput, Command, Flag, GlobalFlag } from "effect/cli"
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
 * `--log-level` (which would clash with ours) and `--wizard` (an interactive builder of
 * command lines: not a dlsync flag, so an unknown one, exit 64), and a bad command line
 * said in one line (`usageLine`) instead of the whole help. Whoever runs `root` provides it.
 */
export const cliConfig = Layer.merge(
  CliConfig.layer({
    builtIns: GlobalFlag.BuiltIns.filter((flag) => flag !== GlobalFlag.LogLevel && flag !== GlobalFlag.Wizard)
  }),
  CliOutput.layerPresenter({
    present: (event) =>
      event._tag === "InvalidInvocation"
        ? Console.error(usageLine(event.commandPath, event.errors))
        : CliOutput.defaultPresenter.present(event)
  })
)

/**
 * A bad command line in one line: each problem (effect/cli's "Did you mean this?" list
 * folded into it) and where the flags are listed.
 */
export const usageLine = (
  commandPath: ReadonlyArray<string>,
  errors: ReadonlyArray<{ readonly message: string }>
): string => {
  const problems = errors.map((error) => {
    const [first = "", ...rest] = error.message.split("\n").map((line) => line.trim())
    const suggestions = rest.filter((line) => line !== "" && !/^Did you mean/i.test(line))
    return suggestions.length === 0 ? first : `${first}; did you mean ${suggestions.join(" or ")}?`
  })
  return `dlsync: ${problems.join("; ")} (\`${commandPath.join(" ")} --help\` lists what it takes)`
}

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
