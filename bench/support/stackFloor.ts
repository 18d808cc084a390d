/**
 * The stack's floor for a start of `dlsync run --once`: the same shape of program with
 * nothing to do. Effect's CLI parses `run --once` against a root command with one
 * subcommand, on the Node platform layer dlsync provides, and exits through
 * NodeRuntime.runMain; bundled as the CLI is and started through a copy of the same launcher
 * (its re-execution with the memory settings, its code cache). What dlsync's start-up costs
 * beyond this row is dlsync's own: its modules, the configuration, the state database, the
 * first API page, the pass.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"

const run = Command.make("run", { once: Flag.Boolean("once").pipe(Flag.withDefault(false)) }, () => Effect.void)
const cli = Command.runWith(Command.make("dlsync").pipe(Command.withSubcommands([run])), { version: "0" })

NodeRuntime.runMain(cli(process.argv.slice(2)).pipe(Effect.provide(NodeServices.layer)))
