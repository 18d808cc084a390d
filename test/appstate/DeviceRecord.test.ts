/** The device record in app storage: conditional writes, 412 retry, pruning, and the namespace limits. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiHttp, ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import {
  DEVICE_RETENTION_MS,
  DeviceRecord,
  quotaAllows,
  STORAGE_MAX_KEYS,
  staleDeviceKeys
} from "../../src/appstate/DeviceRecord.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { transportLayer, useEmulator } from "../auth/support/fixtures.ts"

const DEVICE = "0b5c3c5e-1111-4222-8333-444455556666"
const KEY = `devices/${DEVICE}`

const layer = (e: RunningEmulator) =>
  DeviceRecord.layer({
    deviceId: DEVICE,
    name: "nas",
    version: "0.1.0",
    totals: Effect.succeed({ complete: 3, failed: 1, bytes: 300 })
  }).pipe(
    Layer.provideMerge(
      ApiClient.layer.pipe(
        Layer.provide(ApiHttp.layer.pipe(Layer.provide(ApiObserver.none))),
        Layer.provide(Credentials.apiKey(Redacted.make(e.accessToken))),
        Layer.provideMerge(transportLayer(e))
      )
    )
  )

const storagePuts = (e: RunningEmulator) =>
  e.control.requests().filter((r) => r.method === "PUT" && r.path.startsWith("/api/v1/app-storage/"))

/** The TestClock's time in these tests. */
const NOW = Date.parse("2026-06-01T00:00:00Z")
const daysAgo = (days: number) => new Date(NOW - days * 24 * 60 * 60 * 1000).toISOString()

describe("DeviceRecord", () => {
  it.effect("creates the record with If-None-Match: *, then replaces it with If-Match; a 412 re-reads", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      yield* Effect.gen(function* () {
        const record = yield* DeviceRecord
        const api = yield* ApiClient
        assert.strictEqual(yield* record.publish, "written")
        const created = yield* api.storage.get(KEY)
        assert.deepInclude(fields(created.item.value), { name: "nas", version: "0.1.0" })
        assert.deepStrictEqual(fields(created.item.value).totals, {
          complete: 3,
          failed: 1,
          bytes: 300
        })
        assert.strictEqual(yield* record.publish, "written")
        // Someone else replaces it: our ETag is stale, the next publish re-reads and wins.
        yield* api.storage.put(KEY, { name: "tampered" })
        assert.strictEqual(yield* record.publish, "written")
        const puts = storagePuts(e)
        assert.deepStrictEqual(
          puts.map((p) => [
            p.headers["if-none-match"] ?? null,
            p.headers["if-match"] === undefined ? null : "etag",
            p.status
          ]),
          [
            ["*", null, 200],
            [null, "etag", 200],
            [null, null, 200],
            [null, "etag", 412],
            [null, "etag", 200]
          ]
        )
        assert.deepInclude(fields((yield* api.storage.get(KEY)).item.value), { name: "nas" })
      }).pipe(Effect.provide(layer(e), { local: true }))
    })
  )

  it.effect("prunes other devices unseen for 90 days, never itself or other keys", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW)
      const e = yield* useEmulator()
      yield* Effect.gen(function* () {
        const record = yield* DeviceRecord
        const api = yield* ApiClient
        yield* api.storage.put("devices/old", { name: "old", last_seen: daysAgo(91) })
        yield* api.storage.put("devices/recent", { name: "recent", last_seen: daysAgo(89) })
        yield* api.storage.put("settings", { theme: "dark" })
        yield* api.storage.put(KEY, { name: "nas", last_seen: daysAgo(200) })
        assert.strictEqual(yield* record.prune, 1)
        const keys = (yield* api.storage.list()).data.map((i) => i.key).sort()
        assert.deepStrictEqual(keys, ["devices/0b5c3c5e-1111-4222-8333-444455556666", "devices/recent", "settings"])
      }).pipe(Effect.provide(layer(e), { local: true }))
    })
  )

  it.effect("does not create a record when the namespace is full", () =>
    Effect.gen(function* () {
      const e = yield* useEmulator()
      yield* Effect.gen(function* () {
        const record = yield* DeviceRecord
        const api = yield* ApiClient
        yield* Effect.forEach(
          Array.from({ length: STORAGE_MAX_KEYS }, (_, i) => `k${i}`),
          (k) => api.storage.put(k, { k }),
          { concurrency: 16 }
        )
        const before = storagePuts(e).length
        assert.strictEqual(yield* record.publish, "no_room")
        assert.strictEqual(storagePuts(e).length, before)
      }).pipe(Effect.provide(layer(e), { local: true }))
    })
  )

  it("staleDeviceKeys and quotaAllows", () => {
    const now = Date.parse("2026-06-01T00:00:00Z")
    const items = [
      { key: "devices/a", value: { last_seen: new Date(now - DEVICE_RETENTION_MS - 1).toISOString() } },
      { key: "devices/b", value: { last_seen: new Date(now - DEVICE_RETENTION_MS + 1).toISOString() } },
      { key: "devices/c", value: "garbage" },
      { key: "devices/me", value: { last_seen: "1970-01-01T00:00:00Z" } },
      { key: "other", value: { last_seen: "1970-01-01T00:00:00Z" } }
    ]
    assert.deepStrictEqual(staleDeviceKeys(items, "devices/me", now), ["devices/a", "devices/c"])
    assert.isTrue(quotaAllows(items, "devices/me", { x: 1 }))
    const full = Array.from({ length: STORAGE_MAX_KEYS }, (_, n) => ({ key: `k${n}`, value: n }))
    assert.isFalse(quotaAllows(full, "devices/me", {}))
    assert.isTrue(quotaAllows(full, "k0", {}))
    assert.isFalse(quotaAllows([{ key: "big", value: "x".repeat(5 * 1024 * 1024) }], "devices/me", {}))
  })
})

const fields = Schema.decodeUnknownSync(Schema.Record(Schema.String, Schema.Unknown))
