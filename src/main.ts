/**
 * Entry point: parse the command line, run the command, and turn its outcome into an exit
 * code in one place (see cli/exitCodes.ts).
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Predicate } from "effect"
import { Command } from "effect/cli"
import { configCommand } from "./cli/config.ts"
import { demoCommand } from "./cli/demo.ts"
import { emulatorCommand } from "./cli/emulator.ts"
import { ExitCode } from "./cli/exitCodes.ts"
import { root } from "./cli/root.ts"
import { VERSION } from "./version.ts"

const cli = root.pipe(Command.withSubcommands([configCommand, demoCommand, emulatorCommand]), Command.run({ version: VERSION }))

const program = cli.pipe(
  Effect.as(ExitCode.ok),
  Effect.catch((error) =>
    Effect.gen(function* () {
      switch (error._tag) {
        case "ConfigError":
          yield* Console.error(`dlsync: configuration error\n${error.message}`)
          return ExitCode.config
        default:
          // Command-line parse errors: the CLI has already printed them with the help text.
          return ExitCode.usage
      }
    })
  ),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: false,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(Predicate.isNumber(exit.value) ? exit.value : ExitCode.ok)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(ExitCode.ok)
    return onExit(ExitCode.software)
  }
})
