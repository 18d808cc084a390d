/**
 * Blackhole folders: `[blackhole] watch = "/path"`. A release dropped there (a .torrent,
 * .magnet or .nzb file, or a .url/.txt holding one URL or magnet; a sub-folder names the
 * category) is added to the intake queue once it has stopped growing and parses whole, then
 * moved out of the way, so the folder shows at a glance what was taken and what was not:
 *
 *   drop ─► seen (size, mtime) ─► unchanged for SETTLE ─► larger than MAX_DROP_BYTES ─► failed/
 *                                        │
 *                                        ▼ read (asynchronously, at most MAX_DROP_BYTES)
 *                            whole? (dropWhole.ts) ── no: waits; still cut PARTIAL_WAIT after
 *                                        │            its last change ─► failed/
 *                                        ▼ yes
 *                            Intake.add (via "blackhole")
 *                               ├─ added    ─► processed/<name>
 *                               ├─ refused  ─► failed/<name> + <name>.reason.txt
 *                               └─ store unavailable: left, tried again
 *
 * Invariants:
 * - A file is read only after two looks SETTLE apart found the same size and mtime (the
 *   writer may still be writing before that), and only when its size is within
 *   MAX_DROP_BYTES (by lstat, before any byte is read); files already there at start are
 *   taken alike.
 * - Nothing cut short is sent: a file whose form is unfinished (a writer pausing longer than
 *   SETTLE) waits for its next change, and goes to failed/ with the reason when it stays cut.
 * - Nothing is replaced: a name taken in processed/ or failed/ gets " (2)", " (3)"… before
 *   its extension. processed/ and failed/ are never read as input.
 * - Taking a file again after a crash between the add and the move is harmless: the intake
 *   returns the item it already has for that identity.
 * - Symlinks, hidden files and other extensions are left alone.
 *
 * The folder is looked at when the watcher (fs/watchFolder.ts) reports a change, every TICK
 * while a file waits, and every RESCAN (another host's writes to a network share are not
 * reported); time is Effect's Clock.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Cause, Clock, Duration, Effect, Layer, Queue, Schema } from "effect"
import { describeError, errnoCode } from "../fs/errno.ts"
import { makeDirsSync } from "../fs/makeDirs.ts"
import { moveFileNoReplace } from "../fs/moveFileNoReplace.ts"
import { watchFolder } from "../fs/watchFolder.ts"
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
import { wholeness } from "./dropWhole.ts"

/** How long a file must keep its size and mtime before it is taken. */
export const SETTLE = Duration.seconds(3)

/** How often the folder is looked at while a file waits to settle. */
export const TICK = Duration.seconds(1)

/** How often the folder is looked at when no change is reported. */
export const RESCAN = Duration.seconds(30)

/** A dropped file larger than this is refused (an NZB of a big season pack is tens of MB). */
export const MAX_DROP_BYTES = 64 * 1024 * 1024

/** How long a file that does not parse whole is waited for after its last change. */
export const PARTIAL_WAIT = Duration.minutes(1)

/** The watcher's quiet time before a look: one look per burst of writes. */
const WATCH_QUIET_MS = 250

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
  const partialWaitMs = Duration.toMillis(PARTIAL_WAIT)
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
  /** Each file seen and not yet taken: its size and mtime since `since`, and why it is cut, if it is. */
  const seen = new Map<
    string,
    { readonly size: bigint; readonly mtimeNs: bigint; readonly since: number; readonly cut: string | null }
  >()

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

  /** Adds one settled file; "later" when it stays for another try, `{ cut }` when it is not whole yet. */
  const take = (drop: Drop, size: bigint): Effect.Effect<Taken | "later" | { readonly cut: string }> =>
    Effect.gen(function* (): Effect.fn.Return<Taken | "later" | { readonly cut: string }> {
      const problem = drop.category === "" ? undefined : categoryProblem(drop.category)
      if (problem !== undefined) return yield* settle(drop, problem)
      if (size > MAX_DROP_BYTES) return yield* settle(drop, TOO_LARGE)
      const content = yield* Effect.promise(() => readAtMost(drop.full, MAX_DROP_BYTES))
      if (content === undefined) return yield* settle(drop, TOO_LARGE)
      const whole = wholeness(drop.kind, content)
      if (!whole.whole) return { cut: whole.cut }
      const read = sourceOf(drop.kind, drop.name, content)
      if ("problem" in read) return yield* settle(drop, read.problem)
      return yield* intake.add(read.source, { category: drop.category, via: "blackhole" }).pipe(
        Effect.matchEffect({
          onSuccess: (): Effect.Effect<Taken | "later"> => settle(drop, null),
          onFailure: (error): Effect.Effect<Taken | "later"> =>
            error.reason === "invalid"
              ? settle(drop, error.problem)
              : Effect.as(
                  Effect.logWarning(`blackhole: ${JSON.stringify(drop.rel)} waits: ${error.problem}`),
                  "later" as const
                )
        })
      )
    })

  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const drops = yield* Effect.promise(() => listDrops(root))
    const present = new Set(drops.map((d) => d.full))
    for (const key of seen.keys()) if (!present.has(key)) seen.delete(key)
    const taken: Array<Taken> = []
    for (const drop of drops) {
      const stat = yield* Effect.promise(() => lstat(drop.full))
      if (stat === undefined || !stat.isFile()) {
        seen.delete(drop.full)
        continue
      }
      const before = seen.get(drop.full)
      if (before === undefined || before.size !== stat.size || before.mtimeNs !== stat.mtimeNs) {
        seen.set(drop.full, { size: stat.size, mtimeNs: stat.mtimeNs, since: now, cut: null })
        continue
      }
      if (now - before.since < settleMs) continue
      if (before.cut !== null && now - before.since < partialWaitMs) continue
      const outcome = yield* (
        before.cut === null
          ? take(drop, stat.size)
          : settle(
              drop,
              `incomplete: ${before.cut}, unchanged for ${Duration.format(PARTIAL_WAIT)}; drop it again once it is written whole`
            )
      ).pipe(
        Effect.catchDefect((defect) =>
          Effect.as(
            Effect.logWarning(`blackhole: cannot take ${JSON.stringify(drop.rel)} yet: ${describeError(defect)}`),
            "later" as const
          )
        )
      )
      if (outcome === "later") seen.set(drop.full, { ...before, since: now })
      else if ("cut" in outcome) seen.set(drop.full, { ...before, cut: outcome.cut })
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
 * not set; else the sweeper, woken by the watcher, by TICK while a file waits and by RESCAN,
 * for the layer's lifetime.
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
          const reserved = [PROCESSED_DIR, FAILED_DIR].map((dir) => NodePath.join(watch, dir))
          const watching = yield* watchFolder({
            folder: watch,
            what: "blackhole.watch",
            whenFailing: `new files are found within ${Duration.format(RESCAN)}`,
            depth: 1,
            ignored: (path) => reserved.some((dir) => path === dir || path.startsWith(`${dir}/`)),
            settleMs: WATCH_QUIET_MS
          })
          yield* watching.ready
          yield* Effect.logInfo(`blackhole: watching ${watch}`)
          const next = Effect.flatMap(blackhole.waiting, (waiting) =>
            Effect.race(Queue.take(watching.changes), Effect.sleep(waiting > 0 ? TICK : RESCAN))
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

const TOO_LARGE = `larger than ${MAX_DROP_BYTES / 1024 / 1024} MiB`

/** The files the blackhole takes: at the top (no category) and one level down (the category). */
const listDrops = async (root: string): Promise<ReadonlyArray<Drop>> => {
  const drops: Array<Drop> = []
  const collect = async (dir: string, category: string) => {
    for (const entry of await readDir(dir)) {
      if (entry.isDirectory()) {
        if (category === "" && isCategoryFolder(entry.name)) await collect(NodePath.join(dir, entry.name), entry.name)
        continue
      }
      const kind = entry.isFile() ? dropKind(entry.name) : undefined
      if (kind === undefined) continue
      const full = NodePath.join(dir, entry.name)
      drops.push({ full, rel: NodePath.relative(root, full), name: entry.name, category, kind })
    }
  }
  await collect(root, "")
  return drops
}

const readDir = async (dir: string): Promise<ReadonlyArray<Fs.Dirent>> => {
  try {
    return await Fs.promises.readdir(dir, { withFileTypes: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return []
    throw e
  }
}

const lstat = async (full: string): Promise<Fs.BigIntStats | undefined> => {
  try {
    return await Fs.promises.lstat(full, { bigint: true })
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return undefined
    throw e
  }
}

/** The file's bytes, or undefined when it holds more than `max` (it grew since its lstat). */
const readAtMost = async (full: string, max: number): Promise<Uint8Array | undefined> => {
  const file = await Fs.promises.open(full, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW)
  try {
    const chunks: Array<Uint8Array> = []
    let size = 0
    while (size <= max) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, max + 1 - size))
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) return Buffer.concat(chunks)
      chunks.push(buffer.subarray(0, bytesRead))
      size += bytesRead
    }
    return undefined
  } finally {
    await file.close()
  }
}

const READ_CHUNK = 1024 * 1024

/** A path's lstat, synchronously: for moving a taken file aside (a few calls per file taken). */
const lstatSync = (full: string): Fs.BigIntStats | undefined => {
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
    if (lstatSync(to) !== undefined || lstatSync(`${to}${REASON_SUFFIX}`) !== undefined) continue
    try {
      moveFileNoReplace(full, to, to)
      return to
    } catch (e) {
      if (lstatSync(to) === undefined) throw e
    }
  }
}
