/**
 * `dlsync emulator` (cli/emulator.ts): runs the Download Service emulator (src/emulator) until SIGINT or
 * SIGTERM. It prints the API and CDN URLs, a personal API key and an OAuth client id; with
 * `--json`, one JSON object on the first line of stdout that scripts and tests parse.
 */
import { Console, Effect, Option, Predicate, Schema } from "effect"
import { type RunningEmulator, startEmulator } from "../emulator/server.ts"

/** The emulator command's flags (cli/emulator.ts). */
export interface EmulatorFlags {
  readonly port: number
  readonly cdnPort: Option.Option<number>
  readonly host: string
  readonly library: string
  readonly contentDir: Option.Option<string>
  readonly cdnBase: Option.Option<string>
  readonly cdnRatePerConnection: Option.Option<number>
  readonly control: boolean
  readonly json: boolean
}

export const runEmulator = Effect.fn("emulator")(function* (flags: EmulatorFlags) {
  const emulator = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        startEmulator({
          host: flags.host,
          port: flags.port,
          cdnPort: Option.getOrElse(flags.cdnPort, () => (flags.port === 0 ? 0 : flags.port + 1)),
          library: flags.library,
          control: flags.control,
          ...Option.match(flags.contentDir, { onNone: () => ({}), onSome: (contentDir) => ({ contentDir }) }),
          ...Option.match(flags.cdnBase, { onNone: () => ({}), onSome: (cdnBase) => ({ cdnBase }) }),
          ...Option.match(flags.cdnRatePerConnection, {
            onNone: () => ({}),
            // 0 ("unlimited") caps nothing.
            onSome: (rate) => (rate > 0 ? { cdnRatePerConnection: rate } : {})
          })
        }),
      catch: (error) => startError(error, flags.host)
    }),
    (running) => Effect.promise(() => running.close())
  )
  yield* Console.log(flags.json ? JSON.stringify(emulatorJson(emulator)) : emulatorBanner(emulator))
  return yield* Effect.never
}, Effect.scoped)

/** The emulator could not start (a port in use, an address not on this host). */
export class EmulatorStartError extends Schema.TaggedError<EmulatorStartError>()("EmulatorStartError", {
  message: Schema.String
}) {}

/** One line naming what stopped the start and what to do. */
const startError = (error: unknown, host: string): EmulatorStartError => {
  const code = Predicate.hasProperty(error, "code") && Predicate.isString(error.code) ? error.code : undefined
  const port = Predicate.hasProperty(error, "port") ? String(error.port) : undefined
  const where = port === undefined ? host : `${host}:${port}`
  const message =
    code === "EADDRINUSE"
      ? `cannot start the emulator: ${where} is already in use (another emulator?); stop it or choose other ports with --port N (and --cdn-port N), or --port 0 for free ones`
      : code === "EACCES"
        ? `cannot start the emulator: no permission to listen on ${where}; choose a port above 1023 with --port N`
        : code === "EADDRNOTAVAIL" || code === "ENOTFOUND"
          ? `cannot start the emulator: ${host} is not an address of this machine; choose another with --host`
          : `cannot start the emulator: ${error instanceof Error ? error.message : String(error)}`
  return new EmulatorStartError({ message })
}

/** The `--json` line. */
export const emulatorJson = (emulator: RunningEmulator) => ({
  base_url: emulator.baseUrl,
  auth_url: emulator.authUrl,
  cdn_url: emulator.cdnUrl,
  api_key: emulator.apiKey,
  client_id: emulator.clientId,
  access_token: emulator.accessToken,
  refresh_token: emulator.refreshToken,
  ...(emulator.controlUrl === undefined ? {} : { control_url: emulator.controlUrl })
})

/** The human-readable start message. */
export const emulatorBanner = (emulator: RunningEmulator): string =>
  [
    "Download Service emulator running (Ctrl-C to stop)",
    `  base_url   ${emulator.baseUrl}`,
    `  auth_url   ${emulator.authUrl}`,
    `  cdn        ${emulator.cdnUrl}`,
    ...(emulator.controlUrl === undefined ? [] : [`  control    ${emulator.controlUrl}`]),
    `  api_key    ${emulator.apiKey}`,
    `  client_id  ${emulator.clientId}`
  ].join("\n")
