/**
 * The store of `mirror.state_dir`: `storeLayer` opens (creating it if need be) and migrates
 * it, for the commands that run the engine; `existingStoreLayer` is for the commands that
 * only read or amend it (`status`, `restore`): with no store there they say so and which
 * directory they read, and create nothing. The usual cause is reading another user's
 * state: the systemd service keeps its own in /var/lib/dlsync.
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, Layer, Schema } from "effect"
import type { AppConfig } from "../config/loadConfig.ts"
import { DATABASE_FILE, Database, type OpenFailure } from "../store/Database.ts"
import { Store } from "../store/Store.ts"

/** The store of `state_dir`, opened and migrated. */
export const storeLayer = (config: AppConfig): Layer.Layer<Store | Database, OpenFailure> =>
  Store.layer.pipe(Layer.provideMerge(Database.layer(config.mirror.state_dir)))

export class NoState extends Schema.TaggedError<NoState>()("NoState", { stateDir: Schema.String }) {
  override get message(): string {
    return (
      `no dlsync state in ${this.stateDir} (mirror.state_dir): dlsync has not run with this state directory; ` +
      "run `dlsync run --once` first, or read the systemd service's state as the service does: " +
      "`sudo -u dlsync env STATE_DIRECTORY=/var/lib/dlsync /opt/dlsync/bin/dlsync.js status --config /etc/dlsync/config.toml`"
    )
  }
}

/** `storeLayer`, or NoState when the state directory holds no store. */
export const existingStoreLayer = (config: AppConfig) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const file = NodePath.join(config.mirror.state_dir, DATABASE_FILE)
      const present = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
      if (!present) return yield* new NoState({ stateDir: config.mirror.state_dir })
      return storeLayer(config)
    })
  )
