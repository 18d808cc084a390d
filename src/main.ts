/**
 * Entry point: parse the command line, run the command, and turn its outcome into an exit
 * code in one place (see cli/exitCodes.ts).
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Predicate } from "effect"
import { Command } from "effect/cli"
import type { ApiError } from "./api/ApiError.ts"
import { configCommand } from "./cli/config.ts"
import { demoCommand } from "./cli/demo.ts"
import { emulatorCommand } from "./cli/emulator.ts"
import { ExitCode } from "./cli/exitCodes.ts"
import { loginCommand } from "./cli/login.ts"
import { logoutCommand } from "./cli/logout.ts"
import { restoreCommand } from "./cli/restore.ts"
import { root } from "./cli/root.ts"
import { onceShortcut, runCommand } from "./cli/run.ts"
import { statusCommand } from "./cli/status.ts"
import { VERSION } from "./version.ts"

const subcommands = [
  runCommand,
  statusCommand,
  restoreCommand,
  loginCommand,
  logoutCommand,
  configCommand,
  emulatorCommand,
  demoCommand
] as const

const cli = Command.runWith(root.pipe(Command.withSubcommands(subcommands)), { version: VERSION })

const program = cli(
  onceShortcut(
    process.argv.slice(2),
    subcommands.map((c) => c.name)
  )
).pipe(
  Effect.as(ExitCode.ok),
  Effect.catch((error) =>
    Effect.gen(function* () {
      switch (error._tag) {
        case "ConfigError":
          yield* Console.error(`dlsync: configuration error\n${error.message}`)
          return ExitCode.config
        case "RootUnavailable":
        case "LocalOpError":
        case "StoreOpenError":
        case "SchemaTooNew":
        case "TokenStoreError":
          yield* Console.error(`dlsync: ${error.message}`)
          return ExitCode.config
        case "InstanceLocked":
          yield* Console.error(`dlsync: ${error.message}`)
          return ExitCode.temporary
        case "LoginRequired":
        case "DeviceLoginFailed":
          yield* Console.error(`dlsync: ${error.message}`)
          return ExitCode.auth
        case "ItemsFailed":
          yield* Console.error(`dlsync: ${error.message}`)
          return ExitCode.itemsFailed
        case "UsageError":
        case "NothingToRestore":
          yield* Console.error(`dlsync: ${error.message}`)
          return ExitCode.usage
        case "ApiError":
          yield* Console.error(`dlsync: ${error.message}`)
          return apiExitCode(error)
        default:
          // Command-line parse errors: the CLI has already printed them with the help text.
          return ExitCode.usage
      }
    })
  ),
  Effect.provide(NodeServices.layer)
)

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
  disableErrorReporting: false,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(Predicate.isNumber(exit.value) ? exit.value : ExitCode.ok)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(ExitCode.ok)
    return onExit(ExitCode.software)
  }
})
