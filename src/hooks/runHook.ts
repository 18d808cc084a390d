/**
 * Runs one hook command: argv (no shell), the environment given, `stdin` written then
 * closed, stdout and stderr kept up to OUTPUT_LIMIT bytes each, and a timeout.
 *
 * Contract:
 * - The hook leads a process group of its own (processGroup.ts). Past its timeout, or when
 *   the run is interrupted (shutdown), the whole group is ended: SIGTERM, then SIGKILL
 *   KILL_GRACE_MS later.
 * - The run ends when the hook's own process exits. Processes it left running in its group
 *   (`sleep 240 &`) are ended then, the same way, so they hold neither a hook slot nor the
 *   output pipes; the outcome says so (`leftovers`).
 * - Output is read until the pipes close, for at most OUTPUT_WAIT_MS after the hook ended
 *   (a process that left the group may hold them open), then the pipes are closed on our side.
 * - It never fails: a program that cannot start, exits non-zero, is killed or times out is
 *   an outcome, for the log. Time is Effect's Clock.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Clock, Deferred, Effect } from "effect"
import { endGroup, groupRuns } from "./processGroup.ts"

/** Bytes of stdout and of stderr kept for the log. */
export const OUTPUT_LIMIT = 4096

/** How long output is still read once the hook and its group have ended. */
export const OUTPUT_WAIT_MS = 1_000

export interface HookRun {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string
  readonly timeoutMs: number
}

export interface HookOutcome {
  /** The hook's process id (its group's id), or null when it never started. */
  readonly pid: number | null
  /** The exit code, or null when a signal ended it or it never started. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  /** Processes the hook left running in its group when it exited, which were ended. */
  readonly leftovers: boolean
  /** Why it could not start (ENOENT, EACCES…), or null. */
  readonly startError: string | null
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

export const runHook = Effect.fnUntraced(function* (run: HookRun): Effect.fn.Return<HookOutcome> {
  const started = yield* Clock.currentTimeMillis
  return yield* Effect.acquireUseRelease(
    Effect.sync(() => start(run)),
    (hook) =>
      Effect.gen(function* () {
        const inTime = yield* Effect.timeoutOption(Deferred.await(hook.exited), run.timeoutMs)
        const timedOut = inTime._tag === "None"
        const leftovers = !timedOut && hook.pid !== null && (yield* groupRuns(hook.pid))
        if (hook.pid !== null && (timedOut || leftovers)) yield* endGroup(hook.pid)
        const ended = inTime._tag === "Some" ? inTime.value : yield* Deferred.await(hook.exited)
        yield* Effect.timeoutOption(Deferred.await(hook.closed), OUTPUT_WAIT_MS)
        const elapsedMs = (yield* Clock.currentTimeMillis) - started
        return {
          pid: hook.pid,
          ...ended,
          timedOut,
          leftovers,
          startError: hook.startError(),
          stdout: hook.stdout.text(),
          stderr: hook.stderr.text(),
          elapsedMs
        }
      }),
    // Also on interruption: nothing of the hook outlives its run.
    (hook) =>
      Effect.gen(function* () {
        if (hook.pid !== null && (yield* groupRuns(hook.pid))) yield* endGroup(hook.pid)
        for (const stream of [hook.child.stdin, hook.child.stdout, hook.child.stderr]) stream?.destroy()
      })
  )
})

// ---------------------------------------------------------------------------------------

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

interface Started {
  readonly child: ChildProcess
  readonly pid: number | null
  /** The hook's own process exited (or never started). */
  readonly exited: Deferred.Deferred<Ended>
  /** Its output pipes closed (or it never started). */
  readonly closed: Deferred.Deferred<void>
  readonly startError: () => string | null
  readonly stdout: BoundedText
  readonly stderr: BoundedText
}

const start = (run: HookRun): Started => {
  const [program = "", ...args] = run.argv
  const exited = Deferred.makeUnsafe<Ended>()
  const closed = Deferred.makeUnsafe<void>()
  const stdout = boundedText()
  const stderr = boundedText()
  let startError: string | null = null
  const child = spawn(program, args, { env: run.env, stdio: ["pipe", "pipe", "pipe"], shell: false, detached: true })
  child.stdout?.on("data", stdout.add)
  child.stderr?.on("data", stderr.add)
  // A destroyed pipe or a hook that does not read its stdin must not fail the run.
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.on("error", () => undefined)
  child.stdin?.end(run.stdin)
  child.on("error", (error: NodeJS.ErrnoException) => {
    startError = error.code ?? error.message
    // Never started: neither "exit" nor "close" is certain to follow.
    if (child.pid === undefined) {
      Deferred.doneUnsafe(exited, Effect.succeed({ code: null, signal: null }))
      Deferred.doneUnsafe(closed, Effect.void)
    }
  })
  child.on("exit", (code, signal) => Deferred.doneUnsafe(exited, Effect.succeed({ code, signal })))
  child.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
  return { child, pid: child.pid ?? null, exited, closed, startError: () => startError, stdout, stderr }
}

interface BoundedText {
  readonly add: (chunk: Buffer) => void
  readonly text: () => string
}

/** Collects chunks up to OUTPUT_LIMIT bytes, marking a cut. */
const boundedText = (): BoundedText => {
  const chunks: Array<Buffer> = []
  let size = 0
  let cut = false
  return {
    add: (chunk) => {
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
