import { Effect } from "effect"

/**
 * A command's handler that imports the command's implementation (src/commands/) when the
 * command runs. The parser needs only the flags; esbuild splits each implementation into
 * chunks of its own (scripts/build.ts), so a command loads only its own code: the daemon
 * holds neither the emulator nor the sign-in flow nor the demo (V8 keeps the source of all
 * it loads). A command's file in src/cli/ imports nothing else of its implementation.
 */
export const onDemand =
  <M, I, A, E, R>(load: () => Promise<M>, handler: (implementation: M, input: I) => Effect.Effect<A, E, R>) =>
  (input: I): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.promise(load), (implementation) => handler(implementation, input))
