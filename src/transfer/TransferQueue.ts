/**
 * The transfer queue: runs at most `concurrency` downloads at once and owns the waits the
 * engine reports instead of blocking on: a file paused for disk space gives its slot
 * back, waits until `statfs` shows enough room again (rechecked every `spaceRecheckMs`),
 * then queues again; without `waitForSpace` (`run --once`) the submit fails with
 * NotEnoughSpace instead.
 *
 *   submit ─► wait for a slot ─► engine.download ─► Completed | Parked | RateLimited ─► caller
 *                  ▲                    │
 *                  └── space returns ◄──┴─ PausedForSpace (slot released)
 *
 * The slots are an Effect semaphore rather than a promise queue: interrupting a caller
 * (shutdown) interrupts its download in the same fiber tree, which aborts the requests
 * and waits for in-flight writes before descriptors close; spans and log annotations
 * flow through.
 */
import { Context, Effect, Layer, Semaphore } from "effect"
import { NotEnoughSpace } from "./NotEnoughSpace.ts"
import { ProgressTracker } from "./ProgressTracker.ts"
import { TransferEngine, type TransferRequest, type TransferResult } from "./TransferEngine.ts"
import { TransferFs } from "./TransferFs.ts"
import type { TransferOptions } from "./TransferOptions.ts"

export type QueuedResult = Exclude<TransferResult, { readonly _tag: "PausedForSpace" }>

export interface QueueStats {
  /** Downloads holding a slot. */
  readonly running: number
  /** Submitted and waiting for a slot. */
  readonly queued: number
  /** Paused until the file system has room again. */
  readonly waitingForSpace: number
}

export class TransferQueue extends Context.Service<
  TransferQueue,
  {
    /**
     * Downloads one file when a slot is free; resolves once it is completed, parked or rate
     * limited beyond its wait. Fails with NotEnoughSpace without `waitForSpace` (`run --once`).
     */
    readonly submit: (request: TransferRequest) => Effect.Effect<QueuedResult, NotEnoughSpace>
    readonly stats: () => QueueStats
  }
>()("dlsync/transfer/TransferQueue") {
  static readonly layer = (options: TransferOptions) =>
    Layer.effect(
      TransferQueue,
      Effect.gen(function* () {
        const engine = yield* TransferEngine
        const fs = yield* TransferFs
        const progress = yield* ProgressTracker
        const slots = yield* Semaphore.make(Math.max(1, options.concurrency))
        const counts = { running: 0, queued: 0, waitingForSpace: 0 }

        const runOnce = (request: TransferRequest) =>
          Effect.sync(() => counts.queued++).pipe(
            Effect.andThen(
              slots.withPermits(1)(
                Effect.sync(() => {
                  counts.queued--
                  counts.running++
                }).pipe(Effect.andThen(engine.download(request)), Effect.ensuring(Effect.sync(() => counts.running--)))
              )
            ),
            Effect.onInterrupt(() => Effect.sync(() => counts.queued > 0 && counts.queued--))
          )

        const waitForSpace = (root: string, needed: number) =>
          Effect.gen(function* () {
            counts.waitingForSpace++
            while (true) {
              yield* Effect.sleep(options.spaceRecheckMs)
              const free = yield* Effect.promise(() => fs.freeBytes(root).catch(() => 0))
              if (free >= needed) return
            }
          }).pipe(Effect.ensuring(Effect.sync(() => counts.waitingForSpace--)))

        const submit = Effect.fn("TransferQueue.submit")(function* (request: TransferRequest) {
          while (true) {
            const result = yield* runOnce(request)
            if (result._tag !== "PausedForSpace") return result
            if (!options.waitForSpace) {
              return yield* new NotEnoughSpace({
                path: request.root,
                free: result.free,
                needed: result.needed,
                minFree: options.min_free_space
              })
            }
            yield* Effect.logWarning("transfer paused: not enough free space").pipe(
              Effect.annotateLogs({ fileId: request.fileId, free: result.free, needed: result.needed })
            )
            yield* waitForSpace(request.root, result.needed)
            progress.emit({
              _tag: "Retrying",
              fileId: request.fileId,
              name: request.name ?? request.fileId,
              attempt: 0,
              delayMs: 0,
              reason: "free space is back"
            })
          }
        })

        return TransferQueue.of({ submit, stats: () => ({ ...counts }) })
      })
    )
}
