/**
 * sd_notify for a Node process, without a native addon.
 *
 * systemd's notification socket is a unix datagram socket, which Node cannot write to.
 * So each notification runs `systemd-notify` (part of every systemd install) as a child
 * process. That child is not the main process, hence the units set `NotifyAccess=all`;
 * and it exits right after sending, a race that systemd ≥ 246 closes: systemd-notify
 * waits (BARRIER=1) until PID 1 has processed the message. On an older systemd use
 * `Type=exec` and `WatchdogSec=0` (systemd/README.md).
 *
 * Contract:
 * - Without NOTIFY_SOCKET (Docker, a terminal, cron) every method is a no-op.
 * - `ready` is sent once the daemon can do its job (config valid, lock held, store open,
 *   server listening); `status` sets the line `systemctl status` shows; `stopping` is
 *   sent when shutdown starts; `extendTimeout` buys time during a long start or stop.
 * - With WATCHDOG_USEC set (WatchdogSec= in the unit) and meant for this process, the
 *   layer pings WATCHDOG=1 at half the interval from a background fiber, so a wedged
 *   event loop gets the service killed and restarted.
 * - A failed notification is logged as a warning and never fails the caller.
 */
import { execFile } from "node:child_process"
import { Context, Duration, Effect, Layer, Schedule } from "effect"

export interface SdNotifyShape {
  /** Whether a service manager is listening (NOTIFY_SOCKET is set). */
  readonly enabled: boolean
  readonly ready: (status?: string) => Effect.Effect<void>
  readonly status: (text: string) => Effect.Effect<void>
  readonly stopping: Effect.Effect<void>
  readonly extendTimeout: (duration: Duration.Input) => Effect.Effect<void>
  /** The watchdog interval systemd expects pings within, when one is set for this process. */
  readonly watchdog: Duration.Duration | undefined
}

export class SdNotify extends Context.Service<SdNotify, SdNotifyShape>()("dlsync/service/SdNotify") {
  /** Reads NOTIFY_SOCKET / WATCHDOG_USEC / WATCHDOG_PID from the process environment. */
  static readonly layer: Layer.Layer<SdNotify> = Layer.effect(
    SdNotify,
    Effect.suspend(() => makeSdNotify({ env: process.env, pid: process.pid }))
  )
}

export interface SdNotifyOptions {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly pid: number
  /** The notifier binary; "systemd-notify" on PATH by default. */
  readonly command?: string
}

/** Builds the notifier and, when a watchdog is expected, starts pinging it for the scope's life. */
export const makeSdNotify = Effect.fnUntraced(function* (options: SdNotifyOptions) {
  const socket = options.env.NOTIFY_SOCKET ?? ""
  const enabled = socket !== ""
  const command = options.command ?? "systemd-notify"
  const childEnv: Record<string, string> = { PATH: options.env.PATH ?? DEFAULT_PATH, NOTIFY_SOCKET: socket }

  const send = (variables: ReadonlyArray<string>): Effect.Effect<void> =>
    enabled
      ? run(command, variables, childEnv).pipe(
          Effect.catch((message) =>
            Effect.logWarning(`could not notify systemd (${variables[0]?.split("=")[0]}): ${message}`)
          )
        )
      : Effect.void

  const watchdog = watchdogInterval(options.env, options.pid)
  if (enabled && watchdog !== undefined) {
    const every = Duration.millis(Math.max(1, Math.floor(Duration.toMillis(watchdog) / 2)))
    yield* send(["WATCHDOG=1"]).pipe(Effect.repeat(Schedule.spaced(every)), Effect.forkScoped)
  }

  return SdNotify.of({
    enabled,
    ready: (status) => send(status === undefined ? ["READY=1"] : ["READY=1", `STATUS=${oneLine(status)}`]),
    status: (text) => send([`STATUS=${oneLine(text)}`]),
    stopping: send(["STOPPING=1"]),
    extendTimeout: (duration) =>
      send([`EXTEND_TIMEOUT_USEC=${Math.ceil(Duration.toMillis(Duration.fromInputUnsafe(duration)) * 1000)}`]),
    watchdog
  })
})

/** The watchdog interval, when WATCHDOG_USEC is set and WATCHDOG_PID (if set) is this process. */
export const watchdogInterval = (
  env: Readonly<Record<string, string | undefined>>,
  pid: number
): Duration.Duration | undefined => {
  const usec = Number(env.WATCHDOG_USEC ?? "")
  if (!Number.isSafeInteger(usec) || usec <= 0) return undefined
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== "" && Number(env.WATCHDOG_PID) !== pid) return undefined
  return Duration.millis(usec / 1000)
}

// ---------------------------------------------------------------------------------------

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

/** A notification must not hang the daemon: systemd-notify gets this long to deliver. */
const NOTIFY_TIMEOUT_MS = 10_000

/** Variables are newline-separated in the datagram; a status must stay on one line. */
const oneLine = (text: string): string => text.replace(/[\r\n]+/g, " ")

const run = (command: string, variables: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.callback<void, string>((resume) => {
    const child = execFile(command, [...variables], { env, timeout: NOTIFY_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (error === null) resume(Effect.void)
      else resume(Effect.fail(stderr.trim() || error.message))
    })
    return Effect.sync(() => {
      child.kill()
    })
  })
