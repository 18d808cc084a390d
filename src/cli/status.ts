/**
 * `dlsync status [--json]`: what the store knows, readable while the daemon runs and after
 * a restart (it reads the store only, never the service), including the transfers the
 * running dlsync publishes there (engine/transfersStatus.ts).
 */
import { Console, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { settingsFrom } from "../engine/EngineSettings.ts"
import { renderStatus, statusDocument } from "../engine/statusDocument.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"
import { commandConfig } from "./commandConfig.ts"
import { existingStoreLayer } from "./existingStore.ts"

export const statusCommand = Command.make(
  "status",
  {
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print the status document as JSON"), Flag.withDefault(false))
  },
  Effect.fn("status")(function* ({ json }) {
    const config = yield* commandConfig
    const doc = yield* Effect.gen(function* () {
      return yield* statusDocument(yield* Store, settingsFrom(config), yield* IntakeTables)
    }).pipe(Effect.provide(IntakeTables.layer.pipe(Layer.provideMerge(existingStoreLayer(config)))))
    yield* Console.log(json ? JSON.stringify(doc, null, 2) : renderStatus(doc))
  })
).pipe(
  Command.withDescription(
    "Show the mirror's state: mode, counts, active transfers, the intake queue, failures, held deletes, locally deleted items"
  )
)
