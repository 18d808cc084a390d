/**
 * Hooks: `[[hooks]]` entries run a command when their event happens.
 *
 *   mirror events ─► entries whose `event` matches ─► job queue (HOOK_QUEUE, dropping)
 *                                                      ─► HOOK_CONCURRENCY workers ─► runHook
 *
 * Invariants:
 * - A slow or failing hook never blocks nor fails the mirror: the events are read at once into
 *   a bounded queue; a hook that runs past its timeout is killed; a full queue drops (counted,
 *   logged) rather than waits.
 * - argv, no shell; the facts are in `DLSYNC_*` variables (hookInput.ts), never dlsync's own
 *   `DLSYNC_*` settings, which may hold secrets.
 * - Each run's exit status and (bounded) output go to the log.
 * - A hook holds its slot until its own process exits (runHook.ts): what it left running is
 *   ended then, and past its timeout its whole process group is.
 * - At the end of `run --once` (the scope closes without interruption) the hooks already owed
 *   still run, for at most HOOKS_DRAIN_TIMEOUT; those still running then are ended.
 * - At shutdown (SIGTERM/SIGINT: the scope closes interrupted) the stop budget is seconds: the
 *   hooks running are ended at once (their groups: SIGTERM, SIGKILL after the grace) and the
 *   owed ones are not started; one line says how many of each.
 */
import * as NodePath from "node:path"
import { Cause, Duration, Effect, Exit, Fiber, Layer, PubSub, Queue } from "effect"
import type { HookSettings } from "../config/afterLandingSettings.ts"
import { formatDuration } from "../config/units.ts"
import type { MirrorEvent } from "../events/MirrorEvent.ts"
import { MirrorEvents } from "../events/MirrorEvents.ts"
import { hookInput } from "./hookInput.ts"
import { type HookOutcome, runHook } from "./runHook.ts"

/** Hooks running at once. */
export const HOOK_CONCURRENCY = 2
/** Hook runs waiting for a worker before new ones are dropped. */
export const HOOK_QUEUE = 1000
/** The longest shutdown waits for the hooks owed. */
export const HOOKS_DRAIN_TIMEOUT = Duration.minutes(1)

interface Job {
  readonly hook: HookSettings
  readonly event: MirrorEvent
}

/** Runs the hooks for the scope's life; nothing when none is configured. */
export const hooksLayer = (
  root: string,
  hooks: ReadonlyArray<HookSettings>,
  parentEnv: Readonly<Record<string, string | undefined>>
): Layer.Layer<never, never, MirrorEvents> => {
  if (hooks.length === 0) return Layer.empty
  return Layer.effectDiscard(
    Effect.gen(function* () {
      const events = yield* MirrorEvents
      const subscription = yield* events.subscribe
      const jobs = yield* Queue.dropping<Job, Cause.Done>(HOOK_QUEUE)
      let dropped = 0
      const enqueue = Effect.fnUntraced(function* (event: MirrorEvent) {
        for (const hook of hooks) {
          if (hook.event !== event._tag) continue
          if (yield* Queue.offer(jobs, { hook, event })) continue
          dropped += 1
          if (dropped % 100 === 1) yield* Effect.logWarning(`hooks: ${dropped} runs dropped so far (hooks are behind)`)
        }
      })
      let running = 0
      const runJob = Effect.fnUntraced(function* ({ hook, event }: Job) {
        const input = hookInput(event, root, parentEnv)
        running += 1
        const outcome = yield* runHook({ argv: hook.command, ...input, timeoutMs: hook.timeout }).pipe(
          Effect.ensuring(Effect.sync(() => (running -= 1)))
        )
        yield* logOutcome(hook, outcome)
      })
      const work = Effect.forever(Effect.flatMap(Queue.take(jobs), runJob)).pipe(
        Effect.catchIf(Cause.isDone, () => Effect.void)
      )
      const workers = yield* Effect.forEach(Array.from({ length: HOOK_CONCURRENCY }), () => Effect.forkDetach(work))
      const taking = yield* Effect.forkDetach(Effect.forever(Effect.flatMap(PubSub.take(subscription), enqueue)))
      yield* Effect.addFinalizer((exit) =>
        Effect.gen(function* () {
          yield* Fiber.interrupt(taking)
          if (Exit.hasInterrupts(exit)) {
            const owed = yield* Queue.size(jobs)
            const stopped = running
            yield* Fiber.interruptAll(workers)
            if (stopped + owed > 0) {
              yield* Effect.logWarning(`shutdown: ${stopped} running hooks stopped, ${owed} owed not run`)
            }
            return
          }
          for (const event of yield* PubSub.takeUpTo(subscription, Number.POSITIVE_INFINITY)) yield* enqueue(event)
          yield* Queue.end(jobs)
          const done = yield* Effect.timeoutOption(Fiber.awaitAll(workers), HOOKS_DRAIN_TIMEOUT)
          if (done._tag === "None") {
            yield* Effect.logWarning(
              `hooks: ${running} still running after ${Duration.format(HOOKS_DRAIN_TIMEOUT)} stopped`
            )
            yield* Fiber.interruptAll(workers)
          }
        })
      )
    })
  )
}

/** One line per run: what ran, how it ended, and its output (bounded). */
const logOutcome = (hook: HookSettings, outcome: HookOutcome): Effect.Effect<void> => {
  const name = `hook ${hook.event} (${NodePath.basename(hook.command[0] ?? "")})`
  const output = [
    outcome.stdout.trim() === "" ? "" : `; stdout: ${outcome.stdout.trim()}`,
    outcome.stderr.trim() === "" ? "" : `; stderr: ${outcome.stderr.trim()}`
  ].join("")
  const took = `${outcome.elapsedMs} ms`
  if (outcome.startError !== null) return Effect.logWarning(`${name}: could not start: ${outcome.startError}`)
  if (outcome.timedOut) {
    return Effect.logWarning(`${name}: timed out after ${formatDuration(hook.timeout)}: killed${output}`)
  }
  // A hook's run ends with its own process; to outlive it, a program must start a session of its own (setsid).
  const left = outcome.leftovers ? "; it left processes running, ended" : ""
  if (outcome.code === 0) return Effect.logInfo(`${name}: exit 0 (${took})${left}${output}`)
  const how = outcome.code === null ? `killed by ${outcome.signal}` : `exit ${outcome.code}`
  return Effect.logWarning(`${name}: ${how} (${took})${left}${output}`)
}
