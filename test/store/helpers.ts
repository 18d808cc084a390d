import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Layer } from "effect"
import { Database, type OpenFailure } from "../../src/store/Database.ts"
import { Store } from "../../src/store/Store.ts"
import { TransferJournal } from "../../src/transfer/TransferJournal.ts"

export const tempDir = (prefix = "dlsync-store-"): string => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

/** Store + journal + database over `<dir>`; each call builds a fresh connection. */
export const storeLayer = (dir: string): Layer.Layer<Store | TransferJournal | Database, OpenFailure> =>
  Layer.mergeAll(Store.layer, TransferJournal.layerDatabase).pipe(Layer.provideMerge(Database.layer(dir)))

/** Runs `effect` against the store in `dir`, opening and closing the database around it. */
export const withStore = <A, E>(dir: string, effect: Effect.Effect<A, E, Store | TransferJournal | Database>) =>
  effect.pipe(Effect.provide(storeLayer(dir), { local: true }))

/** The same, synchronously (for fast-check properties). */
export const runWithStore = <A, E>(dir: string, effect: Effect.Effect<A, E, Store | TransferJournal | Database>): A =>
  Effect.runSync(withStore(dir, effect))
