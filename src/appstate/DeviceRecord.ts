/**
 * This device's record in app storage, `devices/<device id>`: its name, dlsync version,
 * last time seen and totals, so every device and app of the user can list the mirrors.
 *
 * Invariants:
 * - Written every DEVICE_RECORD_INTERVAL_MS, always conditionally (If-Match with the
 *   item's ETag, or If-None-Match: * to create); a 412 re-reads and retries. The daemon
 *   writes it first as it starts; `run --once` first an interval in, and once more as it
 *   ends (mirrorAppState.ts) so its totals are the pass's outcome: a run shorter than the
 *   interval writes it once.
 * - A new record is created only when the namespace has room for it (256 keys, 5 MiB of
 *   keys plus encoded values per user and app); otherwise one warning and no write.
 * - Records of other devices unseen for DEVICE_RETENTION_MS are deleted with If-Match, so
 *   a device that wrote meanwhile is never deleted. This device's record never is.
 * - Failures are logged and retried at the next interval; they never stop the mirror.
 */
import { Clock, Context, Duration, Effect, Layer, Predicate, Ref } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import type { ApiError } from "../api/ApiError.ts"
import type { Json } from "../api/schemas/common.ts"
import type { StorageItem } from "../api/schemas/storage.ts"
import { retrying } from "../pacing/retry.ts"

export const DEVICE_KEY_PREFIX = "devices/"
export const DEVICE_RECORD_INTERVAL_MS = 60_000
export const DEVICE_RETENTION_MS = 90 * 24 * 60 * 60 * 1000
export const PRUNE_INTERVAL_MS = 24 * 60 * 60 * 1000
/** The service's app storage limits per user and app. */
export const STORAGE_MAX_KEYS = 256
export const STORAGE_MAX_BYTES = 5 * 1024 * 1024
/** Conditional writes tried per publish when each is answered 412. */
const MAX_ATTEMPTS = 3

export interface DeviceTotals {
  /** Files this device mirrored completely. */
  readonly complete: number
  readonly failed: number
  /** Bytes of the mirrored files. */
  readonly bytes: number
}

export interface DeviceRecordOptions {
  readonly deviceId: string
  readonly name: string
  readonly version: string
  /** Read at each publish (from the store). */
  readonly totals: Effect.Effect<DeviceTotals>
}

export type PublishOutcome = "written" | "no_room" | "failed" | "off"

export class DeviceRecord extends Context.Service<
  DeviceRecord,
  {
    /** Writes the record now. */
    readonly publish: Effect.Effect<PublishOutcome>
    /** Deletes the records of devices unseen for 90 days; returns how many. */
    readonly prune: Effect.Effect<number>
  }
>()("dlsync/appstate/DeviceRecord") {
  static readonly layer = (options: DeviceRecordOptions): Layer.Layer<DeviceRecord, never, ApiClient> =>
    Layer.effect(DeviceRecord, makeDeviceRecord(options))

  /** App state off (API key mode): nothing is written. */
  static readonly disabled: Layer.Layer<DeviceRecord> = Layer.succeed(
    DeviceRecord,
    DeviceRecord.of({ publish: Effect.succeed("off"), prune: Effect.succeed(0) })
  )

  /**
   * Background: prune now and daily; publish every minute, the first time now or, without
   * `publishAtStart`, a minute from now (runs with the layer's scope).
   */
  static readonly loop = (options: { readonly publishAtStart: boolean }): Layer.Layer<never, never, DeviceRecord> =>
    Layer.effectDiscard(
      Effect.gen(function* () {
        const record = yield* DeviceRecord
        const interval = Effect.sleep(Duration.millis(DEVICE_RECORD_INTERVAL_MS))
        const publishing = Effect.forever(record.publish.pipe(Effect.andThen(interval)))
        const pruning = Effect.forever(
          record.prune.pipe(Effect.andThen(Effect.sleep(Duration.millis(PRUNE_INTERVAL_MS))))
        )
        yield* Effect.forkScoped(options.publishAtStart ? publishing : Effect.andThen(interval, publishing))
        yield* Effect.forkScoped(pruning)
      })
    )
}

/** Keys of other devices' records last seen before `now - DEVICE_RETENTION_MS` (a record without a readable time counts as unseen). */
export const staleDeviceKeys = (
  items: ReadonlyArray<{ readonly key?: string; readonly value: Json }>,
  ownKey: string,
  nowMs: number
): ReadonlyArray<string> =>
  items.flatMap((item) => {
    if (item.key === undefined || !item.key.startsWith(DEVICE_KEY_PREFIX) || item.key === ownKey) return []
    const seen = lastSeenOf(item.value)
    return seen === undefined || seen < nowMs - DEVICE_RETENTION_MS ? [item.key] : []
  })

/** True when adding (or replacing) `key` with `value` keeps the namespace within its limits. */
export const quotaAllows = (
  items: ReadonlyArray<{ readonly key?: string; readonly value: Json }>,
  key: string,
  value: Json
): boolean => {
  let keys = 0
  let bytes = 0
  for (const item of items) {
    if (item.key === key) continue
    keys++
    bytes += Buffer.byteLength(item.key ?? "", "utf8") + Buffer.byteLength(JSON.stringify(item.value), "utf8")
  }
  const ours = Buffer.byteLength(key, "utf8") + Buffer.byteLength(JSON.stringify(value), "utf8")
  return keys + 1 <= STORAGE_MAX_KEYS && bytes + ours <= STORAGE_MAX_BYTES
}

// ---------------------------------------------------------------------------------------

const makeDeviceRecord = Effect.fnUntraced(function* (options: DeviceRecordOptions) {
  const api = yield* ApiClient
  const key = `${DEVICE_KEY_PREFIX}${options.deviceId}`
  const etag = yield* Ref.make<string | undefined>(undefined)
  const warnedNoRoom = yield* Ref.make(false)

  // An unreachable service is the pass's to report (one line, exit 75): this background
  // housekeeping says so only at debug level, instead of warning ahead of that line.
  const logFailure = (what: string) => (e: ApiError) =>
    (e.reason._tag === "Transport" ? Effect.logDebug : Effect.logWarning)(`app storage: ${what} failed`).pipe(
      Effect.annotateLogs({ key, error: e.message })
    )

  const publishOnce = Effect.gen(function* () {
    const totals = yield* options.totals
    const value = {
      name: options.name,
      version: options.version,
      last_seen: new Date(yield* Clock.currentTimeMillis).toISOString(),
      totals: { complete: totals.complete, failed: totals.failed, bytes: totals.bytes }
    }
    // A 412 (another process wrote it since the read): read again and write again.
    const writeOnce = Effect.gen(function* () {
      let known = yield* Ref.get(etag)
      if (known === undefined) {
        const read = yield* Effect.result(api.storage.get(key))
        if (read._tag === "Success") known = read.success.etag
        else if (read.failure.reason._tag !== "NotFound") return yield* Effect.fail(read.failure)
      }
      if (known === undefined) {
        const list = yield* api.storage.list()
        if (!quotaAllows(list.data, key, value)) {
          if (!(yield* Ref.getAndSet(warnedNoRoom, true))) {
            yield* Effect.logWarning("app storage is full (256 keys or 5 MiB): this device's record is not written")
          }
          return "no_room" as const
        }
      }
      const put = yield* Effect.result(
        api.storage.put(key, value, known === undefined ? { ifNoneMatch: "*" } : { ifMatch: known })
      )
      if (put._tag === "Failure") {
        yield* Ref.set(etag, undefined)
        return yield* Effect.fail(put.failure)
      }
      yield* Ref.set(etag, put.success.etag)
      return "written" as const
    })
    return yield* retrying(writeOnce, (e, attempt) =>
      e.reason._tag === "Precondition" && attempt < MAX_ATTEMPTS ? 0 : undefined
    ).pipe(
      Effect.catchIf(
        (e) => e.reason._tag === "Precondition",
        () => Effect.succeed("failed" as const)
      )
    )
  })

  const publish: Effect.Effect<PublishOutcome> = publishOnce.pipe(
    Effect.catch((e) => logFailure("writing this device's record")(e).pipe(Effect.as("failed" as const))),
    Effect.withSpan("DeviceRecord.publish")
  )

  const prune: Effect.Effect<number> = Effect.gen(function* () {
    const list = yield* api.storage.list()
    const now = yield* Clock.currentTimeMillis
    let removed = 0
    for (const stale of staleDeviceKeys(list.data, key, now)) {
      const item = list.data.find((i) => i.key === stale)
      const itemEtag = item === undefined ? undefined : etagOf(item)
      const current = itemEtag ?? (yield* api.storage.get(stale)).etag
      if (current === undefined) continue
      const deleted = yield* Effect.result(api.storage.delete(stale, { ifMatch: current }))
      if (deleted._tag === "Success") removed++
      else if (deleted.failure.reason._tag !== "Precondition" && deleted.failure.reason._tag !== "NotFound") {
        yield* logFailure(`removing ${stale}`)(deleted.failure)
      }
    }
    if (removed > 0)
      yield* Effect.logInfo("app storage: removed records of devices unseen for 90 days").pipe(
        Effect.annotateLogs({ removed })
      )
    return removed
  }).pipe(
    Effect.catch((e) => logFailure("pruning old device records")(e).pipe(Effect.as(0))),
    Effect.withSpan("DeviceRecord.prune")
  )

  return DeviceRecord.of({ publish, prune })
})

const lastSeenOf = (value: Json): number | undefined => {
  if (!Predicate.isObject(value) || Array.isArray(value) || !("last_seen" in value)) return undefined
  const seen = value.last_seen
  if (!Predicate.isString(seen)) return undefined
  const ms = Date.parse(seen)
  return Number.isNaN(ms) ? undefined : ms
}

const etagOf = (item: StorageItem): string | undefined => (Predicate.isString(item.etag) ? item.etag : undefined)
