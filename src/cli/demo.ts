import { Console, Effect } from "effect"
import { Command } from "effect/cli"
import { VERSION } from "../version.ts"

/**
 * `dlsync demo`: the main job end to end against the built-in emulator. Until the mirror
 * engine lands it tours what exists.
 */
export const demoCommand = Command.make(
  "demo",
  {},
  Effect.fn("demo")(function* () {
    yield* Console.log(`dlsync ${VERSION} — demo`)
    yield* Console.log("What exists so far:")
    yield* Console.log("  dlsync config check   validate a configuration and print it, secrets redacted")
    yield* Console.log("The emulator and the mirror engine are being built; `npm run demo` will run them.")
  })
).pipe(Command.withDescription("Run the main job against the built-in emulator and show each step"))
