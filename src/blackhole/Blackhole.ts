/**
 * Blackhole folders: `[blackhole] watch = "/path"`. A release dropped there (a .torrent,
 * .magnet or .nzb file, or a .url/.txt holding one URL or magnet; a sub-folder names the
 * category) is added to the intake queue once it has stopped growing, then moved out of the
 * way, so the folder shows at a glance what was taken and what was not:
 *
 *   drop ─► seen (size, mtime) ─► unchanged for SETTLE ─► Intake.add (via "blackhole")
 *                                                          ├─ added    ─► processed/<name>
 *                                                          ├─ refused  ─► failed/<name> + <name>.reason.txt
 *                                                          └─ store unavailable: left, tried again
 *
 * Invariants:
 * - A file is read only after two looks SETTLE apart found the same size and mtime (the
 *   writer may still be writing before that); files already there at start are taken alike.
 * - Nothing is replaced: a name taken in processed/ or failed/ gets " (2)", " (3)"… before
 *   its extension. processed/ and failed/ are never read as input.
 * - Taking a file again after a crash between the add and the move is harmless: the intake
 *   returns the item it already has for that identity.
 * - Symlinks, hidden files and other extensions are left alone.
 *
 * The folder is looked at when chokidar reports a change, and every TICK while a file waits
 * to settle; time is Effect's Clock.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { watch as chokidarWatch } from "chokidar"
import { Cause, Clock, Duration, Effect, Layer, Queue, Schema } from "effect"
import { describeError, errnoCode } from "../fs/errno.ts"
import { makeDirsSync } from "../fs/makeDirs.ts"
import { moveFileNoReplace } from "../fs/moveFileNoReplace.ts"
import { Intake } from "../intake/Intake.ts"
import {
  categoryProblem,
  type DropKind,
  dropKind,
  FAILED_DIR,
  isCategoryFolder,
  numberedName,
  oneLine,
  PROCESSED_DIR,
  REASON_SUFFIX,
  sourceOf
} from "./blackholeFiles.ts"

/** How long a file must keep its size and mtime before it is taken. */
export const SETTLE = Duration.seconds(3)

/** How often the folder is looked at while a file waits to settle. */
export const TICK = Duration.seconds(1)

/** A dropped file larger than this is refused (an NZB of a big season pack is tens of MB). */
export const MAX_DROP_BYTES = 64 * 1024 * 1024

/** The watch folder cannot be used (exit 78). */
export class BlackholeError extends Schema.TaggedError<BlackholeError>()("BlackholeError", {
  message: Schema.String
}) {}

export interface BlackholeOptions {
  /** The watched folder (absolute). */
  readonly watch: string
  readonly settle?: Duration.Input
}

/** What became of one dropped file. */
export interface Taken {
  /** The file's path relative to the watch folder when it was taken. */
  readonly file: string
  readonly outcome: "processed" | "failed"
  /** Where it is now (absolute). */
  readonly movedTo: string
  readonly reason: string | null
}

export interface Blackhole {
  /** One look at the folder: records new and changed files, takes those that settled. */
  readonly sweep: Effect.Effect<ReadonlyArray<Taken>>
  /** Files seen and not yet taken. */
  readonly waiting: Effect.Effect<number>
}

/** The sweeper over `options.watch` (its processed/ and failed/ folders are made here). */
export const makeBlackhole = Effect.fn("Blackhole.make")(function* (options: BlackholeOptions) {
  const intake = yield* Intake
  const root = options.watch
  const settleMs = Duration.toMillis(Duration.fromInputUnsafe(options.settle ?? SETTLE))
  yield* Effect.try({
    try: () => {
      for (const dir of [PROCESSED_DIR, FAILED_DIR]) makeDirsSync(NodePath.join(root, dir))
      Fs.accessSync(root, Fs.constants.R_OK | Fs.constants.W_OK)
    },
    catch: (e) =>
      new BlackholeError({
        message: `cannot use ${root} (blackhole.watch): ${describeError(e)}; create it, make it writable for dlsync, or remove the key`
      })
  })
  const seen = new Map<string, { readonly size: bigint; readonly mtimeNs: bigint; readonly since: number }>()

  const settle = (drop: Drop, reason: string | null): Effect.Effect<Taken> =>
    Effect.sync(() => {
      const outcome: Taken["outcome"] = reason === null ? "processed" : "failed"
      const movedTo = moveAside(drop.full, NodePath.join(root, outcome === "processed" ? PROCESSED_DIR : FAILED_DIR))
      if (reason !== null) Fs.writeFileSync(`${movedTo}${REASON_SUFFIX}`, `${oneLine(reason)}\n`, { flag: "wx" })
      return { file: drop.rel, outcome, movedTo, reason: reason === null ? null : oneLine(reason) }
    }).pipe(
      Effect.tap((taken) =>
        taken.reason === null
          ? Effect.logInfo(
              `blackhole: added ${JSON.stringify(drop.rel)}${drop.category ? ` (category ${drop.category})` : ""}`
            )
          : Effect.logWarning(
              `blackhole: refused ${JSON.stringify(drop.rel)}: ${taken.reason} (moved to ${FAILED_DIR}/)`
            )
      )
    )

  /** Adds one settled file; undefined when it stays for another try (the store is unavailable). */
  const take = (drop: Drop): Effect.Effect<Taken | undefined> =>
    Effect.gen(function* () {
      const problem = drop.category === "" ? undefined : categoryProblem(drop.category)
      if (problem !== undefined) return yield* settle(drop, problem)
      const content = Fs.readFileSync(drop.full)
      if (content.length > MAX_DROP_BYTES) return yield* settle(drop, `larger than ${MAX_DROP_BYTES / 1024 / 1024} MiB`)
      const read = sourceOf(drop.kind, drop.name, new Uint8Array(content))
      if ("problem" in read) return yield* settle(drop, read.problem)
      return yield* intake.add(read.source, { category: drop.category, via: "blackhole" }).pipe(
        Effect.matchEffect({
          onSuccess: () => settle(drop, null),
          onFailure: (error) =>
            error.reason === "invalid"
              ? settle(drop, error.problem)
              : Effect.as(
                  Effect.logWarning(`blackhole: ${JSON.stringify(drop.rel)} waits: ${error.problem}`),
                  undefined
                )
        })
      )
    })

  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const drops = listDrops(root)
    const present = new Set(drops.map((d) => d.full))
    for (const key of seen.keys()) if (!present.has(key)) seen.delete(key)
    const taken: Array<Taken> = []
    for (const drop of drops) {
      const stat = lstat(drop.full)
      if (stat === undefined || !stat.isFile()) {
        seen.delete(drop.full)
        continue
      }
      const before = seen.get(drop.full)
      if (before === undefined || before.size !== stat.size || before.mtimeNs !== stat.mtimeNs) {
        seen.set(drop.full, { size: stat.size, mtimeNs: stat.mtimeNs, since: now })
        continue
      }
      if (now - before.since < settleMs) continue
      const outcome = yield* take(drop).pipe(
        Effect.catchDefect((defect) =>
          Effect.as(
            Effect.logWarning(`blackhole: cannot take ${JSON.stringify(drop.rel)} yet: ${describeError(defect)}`),
            undefined
          )
        )
      )
      if (outcome === undefined) seen.set(drop.full, { ...before, since: now })
      else {
        seen.delete(drop.full)
        taken.push(outcome)
      }
    }
    return taken
  })

  const blackhole: Blackhole = { sweep, waiting: Effect.sync(() => seen.size) }
  return blackhole
})

/**
 * The daemon's one line: `blackholeLayer(config.blackhole.watch)`. Nothing when `watch` is
 * not set; else the sweeper, woken by chokidar and by TICK while a file settles, for the
 * layer's lifetime.
 */
export const blackholeLayer = (
  watch: string | undefined,
  settle?: Duration.Input
): Layer.Layer<never, BlackholeError, Intake> =>
  watch === undefined
    ? Layer.empty
    : Layer.effectDiscard(
        Effect.gen(function* () {
          const blackhole = yield* makeBlackhole({ watch, ...(settle === undefined ? {} : { settle }) })
          const wake = yield* Queue.sliding<void>(1)
          const reserved = [PROCESSED_DIR, FAILED_DIR].map((dir) => NodePath.join(watch, dir))
          yield* Effect.acquireRelease(
            Effect.sync(() => {
              const watcher = chokidarWatch(watch, {
                ignoreInitial: true,
                depth: 1,
                ignored: (path: string) => reserved.some((dir) => path === dir || path.startsWith(`${dir}/`))
              })
              watcher.on("all", () => Queue.offerUnsafe(wake, undefined))
              watcher.on("error", () => undefined)
              return watcher
            }),
            (watcher) => Effect.promise(() => watcher.close())
          )
          yield* Effect.logInfo(`blackhole: watching ${watch}`)
          const next = Effect.flatMap(blackhole.waiting, (waiting) =>
            waiting > 0 ? Effect.race(Queue.take(wake), Effect.sleep(TICK)) : Queue.take(wake)
          )
          const round = blackhole.sweep.pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.failCause(cause)
                : Effect.as(Effect.logWarning(`blackhole: cannot read ${watch}: ${Cause.pretty(cause)}`), [])
            ),
            Effect.andThen(next)
          )
          yield* Effect.forkScoped(Effect.forever(round))
        })
      )

// ---------------------------------------------------------------------------------------

interface Drop {
  readonly full: string
  /** Relative to the watch folder. */
  readonly rel: string
  readonly name: string
  readonly category: string
  readonly kind: DropKind
}

/** The files the blackhole takes: at the top (no category) and one level down (the category). */
const listDrops = (root: string): ReadonlyArray<Drop> => {
  const drops: Array<Drop> = []
  const collect = (dir: string, category: string) => {
    for (const entry of readDir(dir)) {
      if (entry.isDirectory()) {
        if (category === "" && isCategoryFolder(entry.name)) collect(NodePath.join(dir, entry.name), entry.name)
        continue
      }
      const kind = entry.isFile() ? dropKind(entry.name) : undefined
      if (kind === undefined) continue
      const full = NodePath.join(dir, entry.name)
      drops.push({ full, rel: NodePath.relative(root, full), name: entry.name, category, kind })
    }
  }
  collect(root, "")
  return drops
}

const readDir = (dir: string): ReadonlyArray<Fs.Dirent> => {
  try {
    return Fs.readdirSync(dir, { withFileTypes: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return []
    throw e
  }
}

const lstat = (full: string): Fs.BigIntStats | undefined => {
  try {
    return Fs.lstatSync(full, { bigint: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined
    throw e
  }
}

/** Moves `full` into `dir` under its own name, or the first numbered one that is free. */
const moveAside = (full: string, dir: string): string => {
  const name = NodePath.basename(full)
  for (let attempt = 1; ; attempt++) {
    const to = NodePath.join(dir, numberedName(name, attempt))
    if (lstat(to) !== undefined || lstat(`${to}${REASON_SUFFIX}`) !== undefined) continue
    try {
      moveFileNoReplace(full, to, to)
      return to
    } catch (e) {
      if (lstat(to) === undefined) throw e
    }
  }
}
