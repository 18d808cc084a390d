/**
 * Entry point: parse the command line, run the command, and turn its outcome into an exit
 * code in one place (see cli/exitCodes.ts).
 *
 * Every command logs through the logger layer (log/logLayer.ts: stderr, text on a TTY,
 * JSON lines otherwise, secrets scrubbed), set up from `[log]` of the configuration when
 * one loads (its secrets and the echoable parts of its outbound URLs become known to the
 * scrubber, log/configSecrets.ts), from defaults otherwise
 * (`emulator`, `--help`, or a broken configuration, which the command itself reports).
 * The configuration is read once: the logger's load is the command's (commandConfig.ts).
 * The global `--log-level` flag overrides the level. Command output (`status`, `config
 * check`, `--json`) is written with Console.log to stdout and never becomes a log line.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Exit, Layer, Option, Predicate } from "effect"
import { type CliError, Command } from "effect/cli"
import type { ApiError } from "./api/ApiError.ts"
import { addCommand } from "./cli/add.ts"
import { apiFailureMessage } from "./cli/apiFailureMessage.ts"
import { ConfigLoader, loadOnce } from "./cli/commandConfig.ts"
import { configCommand } from "./cli/config.ts"
import { demoCommand } from "./cli/demo.ts"
import { doctorCommand } from "./cli/doctor.ts"
import { emulatorCommand } from "./cli/emulator.ts"
import { ExitCode } from "./cli/exitCodes.ts"
import { loginCommand } from "./cli/login.ts"
import { logoutCommand } from "./cli/logout.ts"
import { portHolder, portHolderNote } from "./cli/portHolder.ts"
import { restoreCommand } from "./cli/restore.ts"
import { cliConfig, flagArgument, logLevelArgument, root } from "./cli/root.ts"
import { onceShortcut, runCommand } from "./cli/run.ts"
import { statusCommand } from "./cli/status.ts"
import { configSecrets } from "./log/configSecrets.ts"
import { logLayer } from "./log/logLayer.ts"
import { storeFailureOf } from "./store/StoreError.ts"
import { VERSION } from "./version.ts"

/**
 * The commands, one line each. A command is its command line in cli/ (flags and help; its
 * handler imports the implementation in commands/ on demand, see cli/onDemand.ts) and the
 * layers it runs on from layers/.
 */
const subcommands = [
  runCommand,
  statusCommand,
  restoreCommand,
  loginCommand,
  logoutCommand,
  configCommand,
  emulatorCommand,
  demoCommand,
  addCommand,
  doctorCommand
] as const

const cli = Command.runWith(root.pipe(Command.withSubcommands(subcommands)), { version: VERSION })

const args = onceShortcut(
  process.argv.slice(2),
  subcommands.map((c) => c.name)
)

/** `--config FILE`, read ahead of the parser for the logger. */
const configPath = flagArgument(args, "config")

/** `--log-level`, read ahead of the parser for the logger; it wins over `log.level`. */
const logLevel = logLevelArgument(args)

/** Shared by the logger and the command: one read of the configuration (and one report of its errors). */
const configLoader = loadOnce()

/** The logger, from the configuration when it loads, else the defaults. */
const logging = Layer.unwrap(
  configLoader(configPath).pipe(
    Effect.option,
    Effect.map((loaded) =>
      Option.match(loaded, {
        onNone: () => logLayer({ level: Option.getOrElse(logLevel, () => "info"), format: "auto" }),
        onSome: (config) =>
          logLayer({
            level: Option.getOrElse(logLevel, () => config.log.level),
            format: config.log.format,
            scrubber: configSecrets(config)
          })
      })
    )
  )
)

/** Every failure a command may end with; CliError is the parser's own (printed with the help text). */
type Failure = Effect.Error<ReturnType<typeof cli>>

/**
 * The exit code of each expected failure, by its tag: the one table (a new failure that is
 * missing here does not compile). ApiError's code depends on its reason (apiExitCode).
 */
const EXIT_CODES = {
  ConfigError: ExitCode.config,
  NoState: ExitCode.config,
  RootUnavailable: ExitCode.config,
  LocalOpError: ExitCode.config,
  StoreOpenError: ExitCode.config,
  SchemaTooNew: ExitCode.config,
  TokenStoreError: ExitCode.config,
  HealthServerError: ExitCode.config,
  BlackholeError: ExitCode.config,
  StoreDamaged: ExitCode.config,
  EmulatorStartError: ExitCode.temporary,
  InstanceLocked: ExitCode.temporary,
  StateDiskFull: ExitCode.temporary,
  NotEnoughSpace: ExitCode.temporary,
  LoginRequired: ExitCode.auth,
  DeviceLoginFailed: ExitCode.auth,
  ItemsFailed: ExitCode.itemsFailed,
  AddFailed: ExitCode.itemsFailed,
  UsageError: ExitCode.usage,
  NothingToRestore: ExitCode.usage,
  AppUnreachable: ExitCode.temporary,
  PathsNotSeen: ExitCode.itemsFailed
} as const satisfies Record<Exclude<Failure, CliError.CliError | ApiError>["_tag"], ExitCode>

const isExpected = (error: Failure): error is Extract<Failure, { readonly _tag: keyof typeof EXIT_CODES }> =>
  Object.hasOwn(EXIT_CODES, error._tag)

const program = cli(args).pipe(
  Effect.as(ExitCode.ok),
  Effect.catch((error) =>
    Effect.gen(function* () {
      if (error._tag === "ApiError") {
        const service = yield* configLoader(configPath).pipe(
          Effect.map((config) => ({ baseUrl: config.service.base_url, apiKey: Option.isSome(config.service.api_key) })),
          Effect.option
        )
        yield* Console.error(`dlsync: ${apiFailureMessage(error, Option.getOrUndefined(service))}`)
        return apiExitCode(error)
      }
      // Command-line parse errors: the CLI has already printed them with the help text.
      if (!isExpected(error)) return ExitCode.usage
      const lines =
        error._tag === "ConfigError"
          ? error.message.split("\n").map((l) => `configuration error: ${l}`)
          : [`${error.message}${yield* portInUseNote(error)}`]
      for (const line of lines) yield* Console.error(`dlsync: ${line}`)
      return EXIT_CODES[error._tag]
    })
  ),
  Effect.catchDefect((defect) => storeDefect(defect)),
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause)
      : Effect.gen(function* () {
          // A defect: dlsync's own bug, not the user's. One line; the trace at debug level.
          const defect = Cause.squash(cause)
          const what = defect instanceof Error ? defect.message : String(defect)
          yield* Console.error(
            `dlsync: internal error: ${what}; please report it (\`--log-level debug\` shows the details)`
          )
          yield* Effect.logDebug("internal error", cause)
          return ExitCode.software
        })
  ),
  Effect.provide(logging),
  Effect.provide(cliConfig),
  Effect.provideService(ConfigLoader, configLoader),
  Effect.provide(NodeServices.layer)
)

/**
 * A SQLite or file-system error thrown while the store works (the store's queries run
 * synchronously, so they surface as defects): a full disk is temporary (75), a damaged
 * database needs the owner (78); each is one line. Anything else stays a defect (70).
 */
const storeDefect = (defect: unknown) =>
  Effect.gen(function* () {
    const config = yield* Effect.option(configLoader(configPath))
    const failure = Option.isSome(config) ? storeFailureOf(defect, config.value.mirror.state_dir) : undefined
    if (failure === undefined) return yield* Effect.die(defect)
    yield* Effect.logDebug("store failure", defect)
    yield* Console.error(`dlsync: ${failure.message}`)
    return failure._tag === "StateDiskFull" ? ExitCode.temporary : ExitCode.config
  })

/** For a listen address in use, who holds its port (cli/portHolder.ts), as the end of the failure's line. */
const portInUseNote = (error: Failure) =>
  Effect.gen(function* () {
    // A local server's listen failure: its address as set, and the system's error code.
    if (!Predicate.hasProperty(error, "code") || error.code !== "EADDRINUSE") return ""
    if (!Predicate.hasProperty(error, "listen") || !Predicate.isString(error.listen)) return ""
    const port = Number(/:(\d+)$/.exec(error.listen)?.[1])
    if (!Number.isInteger(port) || port <= 0) return ""
    return ` (${portHolderNote(port, yield* portHolder(port))})`
  })

/** 77 for a refused credential, 78 for a request the configuration made invalid, 75 for what may pass. */
const apiExitCode = (error: ApiError): ExitCode => {
  switch (error.reason._tag) {
    case "Unauthorized":
    case "Forbidden":
    case "OAuth":
      return ExitCode.auth
    case "ClientValidation":
      return ExitCode.config
    default:
      return ExitCode.temporary
  }
}

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(Predicate.isNumber(exit.value) ? exit.value : ExitCode.ok)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(ExitCode.ok)
    return onExit(ExitCode.software)
  }
})
