/** The daemon's app-state layer: on with OAuth (progress + device record), off with an API key. */
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Queue, Redacted, Schema } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { FileId } from "../../src/api/schemas/common.ts"
import { AppStateOutbox } from "../../src/appstate/AppStateOutbox.ts"
import { AppStateWriter } from "../../src/appstate/AppStateWriter.ts"
import { appStateLayer } from "../../src/appstate/appStateLayer.ts"
import { loadDeviceId } from "../../src/appstate/deviceIdentity.ts"
import { progressEntry } from "../../src/appstate/ProgressEntry.ts"
import { AuthStatus } from "../../src/auth/OAuthCredentials.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { transportLayer, useEmulator, useStateDir } from "../auth/support/fixtures.ts"
import { makePutSignals, type PutSignals, signallingClient } from "./support/apiSignals.ts"

const fileId = Schema.decodeSync(FileId)

const oauthStatus = Layer.succeed(
  AuthStatus,
  AuthStatus.of({ mode: "oauth", appStateAvailable: true, loginRequired: Effect.succeed(Option.none()) })
)

const layer = (
  e: RunningEmulator,
  stateDir: string,
  status: Layer.Layer<AuthStatus>,
  bearer: string,
  signals?: PutSignals
) =>
  appStateLayer({
    stateDir,
    deviceName: "nas",
    progressIntervalMs: 30_000,
    maxRequestsPerMinute: 300,
    version: "0.1.0",
    totals: Effect.succeed({ complete: 1, failed: 0, bytes: 100 }),
    publishAtStart: true
  }).pipe(
    Layer.provideMerge(Layer.mergeAll(status, AppStateOutbox.layerMemory)),
    Layer.provideMerge(clientLayer(e, bearer, signals))
  )

const clientLayer = (e: RunningEmulator, bearer: string, signals: PutSignals | undefined) => {
  const client = ApiClient.layer.pipe(
    Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
    Layer.provide(Credentials.apiKey(Redacted.make(bearer))),
    Layer.provideMerge(transportLayer(e))
  )
  return signals === undefined ? client : signallingClient(signals).pipe(Layer.provideMerge(client))
}

const complete = progressEntry({ state: "complete", bytes: 100, size: 100, path: "a.mkv", updatedAtMs: 1 })

describe("appStateLayer", () => {
  it.effect("with OAuth: writes progress under this state dir's device id and publishes the device record", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const signals = yield* makePutSignals
      const dir = Path.join(yield* useStateDir, "state")
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), complete)
        yield* writer.drain
        const deviceId = yield* loadDeviceId(dir)
        const api = yield* ApiClient
        const state = yield* api.state.get(fileId(file.id))
        assert.deepStrictEqual(state?.value, { dlsync: { [deviceId]: { ...complete } } })
        // The record is published by a background fiber as the layer starts.
        yield* Queue.take(signals.storagePuts)
        const record = yield* api.storage.get(`devices/${deviceId}`)
        assert.include(JSON.stringify(record.item.value), '"name":"nas"')
      }).pipe(Effect.provide(layer(e, dir, oauthStatus, e.accessToken, signals), { local: true }))
    })
  )

  it.effect("with an API key: app state is off and nothing is sent", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      const dir = yield* useStateDir
      const file = e.control.addFile({ name: "a.mkv", sizeBytes: 100 })
      yield* Effect.gen(function* () {
        const writer = yield* AppStateWriter
        yield* writer.report(fileId(file.id), complete)
        yield* writer.drain
      }).pipe(Effect.provide(layer(e, dir, AuthStatus.apiKey, e.apiKey), { local: true }))
      assert.strictEqual(e.control.requests().length, 0)
    })
  )
})
