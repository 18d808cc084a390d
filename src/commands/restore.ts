/**
 * `dlsync restore PATH` (cli/restore.ts): brings back an item deleted locally under on_local_delete =
 * respect. PATH is relative to the mirror root (or absolute inside it); a folder restores
 * everything below it, and the root itself (`.`, `/` or its absolute path) everything at
 * once (after `rm -rf root/*`, say). The next pass fetches it (`dlsync run --once`, or SIGHUP to the daemon).
 */
import * as NodePath from "node:path"
import { Console, Effect } from "effect"
import { commandConfig } from "../cli/commandConfig.ts"
import { NothingToRestore, UsageError } from "../engine/EngineError.ts"
import { existingStoreLayer } from "../layers/store.ts"
import { Store } from "../store/Store.ts"
import { isBelow } from "../sync/localOps.ts"

export const restore = Effect.fn("restore")(function* ({ path }: { readonly path: string }) {
  const config = yield* commandConfig
  const rel = relativeToRoot(config.mirror.root, path)
  if (rel === undefined) {
    return yield* new UsageError({
      detail: `${path} is not inside the mirror root ${config.mirror.root} (\`dlsync restore .\` restores everything)`
    })
  }
  const restored = yield* Store.use((store) =>
    Effect.gen(function* () {
      const n = yield* rel === WHOLE_MIRROR ? store.local.restoreAll : store.local.restore(rel)
      if (n > 0) {
        yield* store.events.append({
          level: "info",
          kind: "restored",
          message: `${n} item(s) restored by the user; fetched at the next pass`,
          path: rel,
          remoteId: null
        })
      }
      return n
    })
  ).pipe(Effect.provide(existingStoreLayer(config)))
  if (restored === 0) return yield* new NothingToRestore({ path: rel === WHOLE_MIRROR ? "." : rel })
  yield* Console.log(
    `restored ${restored} item(s) at ${rel === WHOLE_MIRROR ? "the mirror root" : rel}; the next pass fetches them (dlsync run --once, or SIGHUP to the daemon)`
  )
})

/** What `relativeToRoot` answers for the root itself: every marker. */
export const WHOLE_MIRROR = ""

/**
 * PATH as a store path (relative, `/`-separated), WHOLE_MIRROR for the root itself (".",
 * "/", or its absolute path), or undefined when it lies outside the root.
 */
export const relativeToRoot = (root: string, path: string): string | undefined => {
  if (path === "/") return WHOLE_MIRROR
  const abs = NodePath.isAbsolute(path) ? path : NodePath.join(root, path)
  if (NodePath.relative(root, abs) === "") return WHOLE_MIRROR
  if (!isBelow(root, abs)) return undefined
  return NodePath.relative(root, abs).split(NodePath.sep).join("/")
}
