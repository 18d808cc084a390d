/** Free space on the mirror's file system, as the engine checks it before each attempt. */
import { Clock, Effect } from "effect"
import type { TransferFault } from "./TransferFault.ts"
import { type Deps, io } from "./transferState.ts"

/** How long a free-space reading is trusted when starting files. */
const FREE_SPACE_TTL_MS = 1_000

/** Free bytes on the root's file system: a reading under a second old unless `fresh`. */
export const freeSpace = (deps: Deps, root: string, fresh: boolean): Effect.Effect<number, TransferFault> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const cached = deps.freeCache.get(root)
    if (!fresh && cached !== undefined && now - cached.at < FREE_SPACE_TTL_MS) return Effect.succeed(cached.free)
    return io("statfs", () => deps.fs.freeBytes(root)).pipe(
      Effect.tap((free) => Effect.sync(() => deps.freeCache.set(root, { at: now, free })))
    )
  })
