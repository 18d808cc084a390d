/** `dlsync emulator`: run the Download Service emulator (commands/emulator.ts). */
import { Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { HumanRate } from "../config/units.ts"
import { parseLibrarySpec } from "../emulator/librarySpec.ts"
import { onDemand } from "./onDemand.ts"

/** The emulator's API port; its CDN's is the next (config/fields.ts says why these). */
export const EMULATOR_DEFAULT_PORT = 7670

export const emulatorCommand = Command.make(
  "emulator",
  {
    port: Flag.Int("port").pipe(
      Flag.withDescription(`API port (default ${EMULATOR_DEFAULT_PORT}; 0 picks a free one)`),
      Flag.withMetavar("N"),
      Flag.withDefault(EMULATOR_DEFAULT_PORT)
    ),
    cdnPort: Flag.Int("cdn-port").pipe(
      Flag.withDescription("CDN port (default: the API port + 1, or a free one with --port 0)"),
      Flag.withMetavar("N"),
      Flag.optional
    ),
    host: Flag.String("host").pipe(Flag.withDescription("Interface to listen on"), Flag.withDefault("127.0.0.1")),
    library: Flag.String("library").pipe(
      Flag.withDescription("Sample library: demo, empty, or files=N,depth=D"),
      Flag.withMetavar("SPEC"),
      Flag.mapTryCatch(
        (spec) => {
          parseLibrarySpec(spec)
          return spec
        },
        (error) => (error instanceof Error ? error.message : String(error))
      ),
      Flag.withDefault("demo")
    ),
    contentDir: Flag.String("content-dir").pipe(
      Flag.withDescription("Serve <DIR>/<file id> instead of generated content where it exists"),
      Flag.withMetavar("DIR"),
      Flag.optional
    ),
    cdnBase: Flag.String("cdn-base").pipe(
      Flag.withDescription("Make download links point at another server serving the same bytes"),
      Flag.withMetavar("URL"),
      Flag.optional
    ),
    cdnRatePerConnection: Flag.String("cdn-rate-per-connection").pipe(
      Flag.withDescription('Cap each CDN connection at this rate, as many debrid CDNs do (e.g. "25 MiB/s")'),
      Flag.withMetavar("RATE"),
      Flag.mapTryCatch(
        (text) => Schema.decodeUnknownSync(HumanRate)(text),
        () => 'expected a rate such as "25 MiB/s"'
      ),
      Flag.optional
    ),
    control: Flag.Boolean("control").pipe(
      Flag.withDescription("Enable the control API under /_control"),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print one JSON object with the URLs and credentials on the first line"),
      Flag.withDefault(false)
    )
  },
  onDemand(
    () => import("../commands/emulator.ts"),
    (command, flags) => command.runEmulator(flags)
  )
).pipe(Command.withDescription("Run the Download Service emulator (for the demo, tests and trying dlsync out)"))
