/**
 * Runs one hook command: argv (no shell), the environment given, `stdin` written then
 * closed, stdout and stderr kept up to OUTPUT_LIMIT bytes each, and a timeout: SIGTERM, then
 * SIGKILL KILL_GRACE later if it is still running. Interruption kills it the same way.
 *
 * It never fails: a program that cannot start, exits non-zero, is killed or times out is
 * an outcome, for the log.
 */
import { spawn } from "node:child_process"
import { Clock, Effect } from "effect"

/** Bytes of stdout and of stderr kept for the log. */
export const OUTPUT_LIMIT = 4096

/** Between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5_000

export interface HookRun {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string
  readonly timeoutMs: number
}

export interface HookOutcome {
  /** The exit code, or null when a signal ended it or it never started. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  /** Why it could not start (ENOENT, EACCES…), or null. */
  readonly startError: string | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

export const runHook = Effect.fnUntraced(function* (run: HookRun): Effect.fn.Return<HookOutcome> {
  const started = yield* Clock.currentTimeMillis
  const stdout = boundedText()
  const stderr = boundedText()
  let startError: string | null = null
  const ended = yield* Effect.callback<Pick<HookOutcome, "code" | "signal">>((resume) => {
    const [program = "", ...args] = run.argv
    const child = spawn(program, args, { env: run.env, stdio: ["pipe", "pipe", "pipe"], shell: false })
    child.stdout.on("data", stdout.add)
    child.stderr.on("data", stderr.add)
    // A hook that does not read its stdin must not fail the run with EPIPE.
    child.stdin.on("error", () => undefined)
    child.stdin.end(run.stdin)
    let closed = false
    const onClose = new Set<() => void>()
    child.on("error", (error: NodeJS.ErrnoException) => {
      startError = error.code ?? error.message
      // Never started: no "close" is certain to follow.
      if (child.pid === undefined) {
        closed = true
        resume(Effect.succeed({ code: null, signal: null }))
      }
    })
    child.on("close", (code, signal) => {
      closed = true
      for (const f of onClose) f()
      resume(Effect.succeed({ code, signal }))
    })
    // Interrupted (the timeout, or shutdown): SIGTERM, SIGKILL after the grace, and wait for it to end.
    return Effect.callback<void>((done) => {
      if (closed) return done(Effect.void)
      const killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS)
      onClose.add(() => {
        clearTimeout(killTimer)
        done(Effect.void)
      })
      child.kill("SIGTERM")
    })
  }).pipe(Effect.timeoutOption(run.timeoutMs))
  const elapsedMs = (yield* Clock.currentTimeMillis) - started
  const common = { startError, stdout: stdout.text(), stderr: stderr.text(), elapsedMs }
  return ended._tag === "Some"
    ? { ...ended.value, timedOut: false, ...common }
    : { code: null, signal: "SIGTERM", timedOut: true, ...common }
})

/** Collects chunks up to OUTPUT_LIMIT bytes, marking a cut. */
const boundedText = () => {
  const chunks: Array<Buffer> = []
  let size = 0
  let cut = false
  return {
    add: (chunk: Buffer) => {
      if (size >= OUTPUT_LIMIT) {
        cut = true
        return
      }
      const part = chunk.subarray(0, OUTPUT_LIMIT - size)
      if (part.length < chunk.length) cut = true
      chunks.push(part)
      size += part.length
    },
    text: () => `${Buffer.concat(chunks).toString("utf8")}${cut ? "…" : ""}`
  }
}
