/**
 * App state for a run in one layer: the per-file progress writer and this device's record
 * in app storage, or the disabled ones when the credential is a personal API key (the
 * service accepts only OAuth there; credentialsFromConfig has logged the notice).
 */
import { Effect, Layer } from "effect"
import type { ApiClient } from "../api/ApiClient.ts"
import { AuthStatus } from "../auth/OAuthCredentials.ts"
import type { AppStateOutbox } from "./AppStateOutbox.ts"
import { AppStateWriter } from "./AppStateWriter.ts"
import { DeviceRecord, type DeviceTotals } from "./DeviceRecord.ts"
import { deviceName, loadDeviceId } from "./deviceIdentity.ts"

export interface AppStateSettings {
  readonly stateDir: string
  /** `app_state.device_name`; the host name when unset. */
  readonly deviceName: string | undefined
  /** `app_state.progress_interval`, milliseconds. */
  readonly progressIntervalMs: number
  /** `app_state.max_requests_per_minute`. */
  readonly maxRequestsPerMinute: number
  /** dlsync's version, for the device record. */
  readonly version: string
  /** The mirror's totals for the device record (read from the store at each publish). */
  readonly totals: Effect.Effect<DeviceTotals>
  /** Publish the device record as the layer starts (the daemon); `run --once` publishes it as it ends. */
  readonly publishAtStart: boolean
}

export const appStateLayer = (
  settings: AppStateSettings
): Layer.Layer<AppStateWriter | DeviceRecord, never, AuthStatus | ApiClient | AppStateOutbox> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const status = yield* AuthStatus
      if (!status.appStateAvailable) return Layer.merge(AppStateWriter.disabled, DeviceRecord.disabled)
      const deviceId = yield* loadDeviceId(settings.stateDir)
      const record = DeviceRecord.loop({ publishAtStart: settings.publishAtStart }).pipe(
        Layer.provideMerge(
          DeviceRecord.layer({
            deviceId,
            name: deviceName(settings.deviceName),
            version: settings.version,
            totals: settings.totals
          })
        )
      )
      const writer = AppStateWriter.layer({
        deviceId,
        progressIntervalMs: settings.progressIntervalMs,
        maxRequestsPerMinute: settings.maxRequestsPerMinute
      })
      return Layer.merge(writer, record)
    })
  )
