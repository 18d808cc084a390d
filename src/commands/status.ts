/**
 * `dlsync status [--json]` (cli/status.ts): what the store knows, readable while the daemon
 * runs and after a restart (it reads the store only, never the service), including the
 * transfers the running dlsync publishes there (engine/transfersStatus.ts).
 */
import { Console, Effect, Layer } from "effect"
import { commandConfig } from "../cli/commandConfig.ts"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { renderStatus, statusDocument } from "../engine/statusDocument.ts"
import { existingStoreLayer } from "../layers/store.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"

export const status = Effect.fn("status")(function* ({ json }: { readonly json: boolean }) {
  const config = yield* commandConfig
  const doc = yield* Effect.gen(function* () {
    return yield* statusDocument(yield* Store, settingsFrom(config), yield* IntakeTables)
  }).pipe(Effect.provide(IntakeTables.layer.pipe(Layer.provideMerge(existingStoreLayer(config)))))
  yield* Console.log(json ? JSON.stringify(doc, null, 2) : renderStatus(doc))
})
