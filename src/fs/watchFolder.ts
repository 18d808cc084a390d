/**
 * The one folder watcher (the mirror root for the daemon, the blackhole's drop folders): a
 * queue that receives one item per settled burst of changes under a folder.
 *
 *   chokidar events ─► raw (sliding 1) ─► quiet for `settle` ─► settled (sliding 1) ─► the consumer
 *
 * Contract:
 * - A burst of changes is one item, once nothing changed for `settle` (Effect's Clock, so
 *   TestClock in tests); items not yet taken collapse into one: the consumer looks at the
 *   folder itself, the watcher only says when.
 * - A watcher that fails (the inotify watch limit, too many open files, a folder it may not
 *   read) is never silent: each kind of failure is logged once, with what it costs and what
 *   to do; the consumer's own periodic looks go on.
 * - The watcher is closed with the scope.
 */
import { watch } from "chokidar"
import { Deferred, Effect, Option, Queue, type Scope } from "effect"
import { describeError, errnoCode } from "./errno.ts"

export interface WatchOptions {
  readonly folder: string
  /** What the folder is to the user, for the log ("the mirror root", "blackhole.watch"). */
  readonly what: string
  /** What is missed while the watcher fails, for the log. */
  readonly whenFailing: string
  /** Levels of sub-folders watched (all when unset). */
  readonly depth?: number
  readonly ignored: (path: string) => boolean
  readonly settleMs: number
}

/** What the settling reads from a watcher: chokidar's FSWatcher, or any emitter of its events. */
export interface ChangeSource {
  on(event: "all", listener: () => void): unknown
  on(event: "error", listener: (error: unknown) => void): unknown
}

export interface FolderWatch {
  /** One item per settled burst of changes. */
  readonly changes: Queue.Dequeue<void>
  /**
   * Done once the watcher has read the folder: changes from then on are reported. A large
   * tree takes a while; nothing needs to wait for it but a caller that acts on a change
   * made right after it starts.
   */
  readonly ready: Effect.Effect<void>
}

/** Watches `options.folder` for the scope's life. */
export const watchFolder = Effect.fnUntraced(function* (
  options: WatchOptions
): Effect.fn.Return<FolderWatch, never, Scope.Scope> {
  const ready = yield* Deferred.make<void>()
  const watcher = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const w = watch(options.folder, {
        ignoreInitial: true,
        ignored: options.ignored,
        ...(options.depth === undefined ? {} : { depth: options.depth })
      })
      w.once("ready", () => Deferred.doneUnsafe(ready, Effect.void))
      return w
    }),
    (w) => Effect.promise(() => w.close())
  )
  return { changes: yield* settledChanges(watcher, options), ready: Deferred.await(ready) }
})

/** The settled bursts of a source's changes, for the scope's life (its errors logged once per kind). */
export const settledChanges = Effect.fnUntraced(function* (
  source: ChangeSource,
  options: Pick<WatchOptions, "folder" | "what" | "whenFailing" | "settleMs">
): Effect.fn.Return<Queue.Dequeue<void>, never, Scope.Scope> {
  const raw = yield* Queue.sliding<void>(1)
  const failures = yield* Queue.sliding<unknown>(16)
  const settled = yield* Queue.sliding<void>(1)
  source.on("all", () => Queue.offerUnsafe(raw, undefined))
  source.on("error", (error) => Queue.offerUnsafe(failures, error))

  const settle = Effect.gen(function* () {
    yield* Queue.take(raw)
    let changing = true
    while (changing) changing = Option.isSome(yield* Effect.timeoutOption(Queue.take(raw), options.settleMs))
    yield* Queue.offer(settled, undefined)
  })
  const logged = new Set<string>()
  const report = Effect.fnUntraced(function* (error: unknown) {
    const kind = errnoCode(error) ?? describeError(error)
    if (logged.has(kind)) return
    logged.add(kind)
    yield* Effect.logWarning(watchProblem(error, options))
  })
  yield* Effect.forkScoped(Effect.forever(settle))
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(failures), report)))
  return settled
})

/** One line: the watcher of `what` failed, what that costs, and what to do. */
export const watchProblem = (
  error: unknown,
  options: Pick<WatchOptions, "folder" | "what" | "whenFailing">
): string => {
  const head = `watching ${options.folder} (${options.what}) failed`
  const cost = `; until it works, ${options.whenFailing}`
  switch (errnoCode(error)) {
    case "ENOSPC":
      return `${head}: the inotify watch limit is reached${cost}; raise it (one watch per folder): \`echo fs.inotify.max_user_watches=1048576 | sudo tee /etc/sysctl.d/90-dlsync.conf && sudo sysctl --system\``
    case "EMFILE":
      return `${head}: too many inotify instances or open files${cost}; raise fs.inotify.max_user_instances (sysctl) or the open-file limit (LimitNOFILE= of the unit, ulimit -n)`
    case "EACCES":
    case "EPERM":
      return `${head}: permission denied (${describeError(error)})${cost}; let dlsync's user read the folder`
    default:
      return `${head}: ${describeError(error)}${cost}`
  }
}
