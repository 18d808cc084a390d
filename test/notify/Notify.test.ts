/**
 * Notifications against stand-ins built from each receiver's documented API: a generic
 * receiver that verifies the Standard Webhooks signature with the `standardwebhooks`
 * library, ntfy, Discord and the Apprise API. Batching on the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { notifyTarget } from "../../src/domain/notifyTarget.ts"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { publishEvent } from "../../src/events/MirrorEvents.ts"
import { DELIVERY_ATTEMPTS } from "../../src/outbound/retryDelivery.ts"
import { advanceUntil, apprise, discord, ntfy, standIn, webhookReceiver } from "../standins/recordingServer.ts"
import { target, withNotify } from "./notifyTargets.ts"

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

const failed = (i: number): MirrorEvent => ({
  _tag: "file_failed",
  path: `Movies/f${i}.mkv`,
  absolutePath: `/mirror/Movies/f${i}.mkv`,
  fileId: `f_${i}`,
  size: 10,
  kind: "video",
  category: "Movies",
  reason: "link refused"
})

const landed = (i: number): MirrorEvent => ({ ...failed(i), _tag: "file_complete" }) as MirrorEvent

/** 500 failed files, and as many that landed, over a minute. */
const aBadPass = Effect.gen(function* () {
  for (let i = 0; i < 500; i++) {
    yield* publishEvent(failed(i))
    yield* publishEvent(landed(i))
    if (i % 50 === 0) yield* TestClock.adjust("5 seconds")
  }
})

describe("notify", () => {
  it.effect(
    "a generic webhook: a pass with 500 failures is one signed message the standardwebhooks library verifies",
    () =>
      Effect.gen(function* () {
        const verified: Array<unknown> = []
        // The receiver verifies against the wall clock's five-minute tolerance: the test clock starts at now.
        yield* TestClock.setTime(Date.now())
        const receiver = yield* standIn(webhookReceiver(SECRET, verified))
        yield* withNotify(
          [target(`${receiver.url}/hooks/dlsync`, { secret: Redacted.make(SECRET) })],
          Effect.gen(function* () {
            yield* aBadPass
            yield* advanceUntil(() => receiver.requests.length >= 1)
            yield* TestClock.adjust("10 minutes")
          })
        )
        assert.strictEqual(receiver.requests.length, 1)
        assert.strictEqual(verified.length, 1, "the signature verifies")
        const payload = verified[0] as {
          type: string
          data: { counts: Record<string, number>; events: Array<{ _tag: string }>; omitted: number; title: string }
        }
        assert.strictEqual(payload.type, "dlsync.events")
        assert.deepStrictEqual(
          payload.data.counts,
          { file_failed: 500 },
          "files that landed are not notified by default"
        )
        assert.strictEqual(payload.data.events.length, 100)
        assert.strictEqual(payload.data.omitted, 400)
        assert.strictEqual(payload.data.title, "dlsync: 500 files failed")
      })
  )

  it.effect("a webhook that fails is retried with the same id, and a tampered secret does not verify", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.now())
      const verified: Array<unknown> = []
      let refusals = 1
      const good = webhookReceiver(SECRET, verified)
      const receiver = yield* standIn((r) => (refusals-- > 0 ? { status: 502 } : good(r)))
      const wrong: Array<unknown> = []
      const other = yield* standIn(webhookReceiver("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", wrong))
      yield* withNotify(
        [target(receiver.url, { secret: Redacted.make(SECRET) }), target(other.url, { secret: Redacted.make(SECRET) })],
        Effect.gen(function* () {
          yield* publishEvent(failed(1))
          yield* advanceUntil(() => receiver.requests.length >= 2 && other.requests.length >= DELIVERY_ATTEMPTS)
        })
      )
      assert.strictEqual(other.requests.length, DELIVERY_ATTEMPTS, "given up after the last attempt")
      const [first, second] = receiver.requests
      assert.strictEqual(first?.headers["webhook-id"], second?.headers["webhook-id"])
      assert.strictEqual(verified.length, 1)
      assert.deepStrictEqual(wrong, [], "a receiver with another secret refuses it")
    })
  )

  it.effect("ntfy, Discord and Apprise each get one message in their own format", () =>
    Effect.gen(function* () {
      const ntfyServer = yield* standIn(ntfy)
      const discordServer = yield* standIn(discord)
      const appriseServer = yield* standIn(apprise)
      const ntfyUrl = `ntfy://${ntfyServer.url.slice("http://".length)}/dlsync-alerts`
      yield* withNotify(
        [
          target(ntfyUrl),
          target(`${discordServer.url}/api/webhooks/123/tok-en`, { type: "discord" }),
          target(`${appriseServer.url}/notify/apprise-key`)
        ],
        Effect.gen(function* () {
          yield* aBadPass
          yield* publishEvent({
            _tag: "deletion_held",
            count: 58,
            mirrored: 60,
            limit: "50 files",
            paths: [],
            reason: "big delete"
          })
          yield* advanceUntil(() => [ntfyServer, discordServer, appriseServer].every((s) => s.requests.length >= 1))
        })
      )
      assert.strictEqual(ntfyServer.requests.length, 1)
      const n = ntfyServer.requests[0]!
      assert.strictEqual(n.url.pathname, "/dlsync-alerts")
      assert.strictEqual(n.headers.title, "dlsync: big delete of 58 files held, 500 files failed")
      assert.strictEqual(n.headers.priority, "high")
      assert.include(n.body, "… and 490 more")
      assert.strictEqual(discordServer.requests.length, 1)
      const content = (JSON.parse(discordServer.requests[0]!.body) as { content: string }).content
      assert.isAtMost(content.length, 2000)
      assert.include(content, "500 files failed")
      assert.strictEqual(appriseServer.requests.length, 1)
      const a = JSON.parse(appriseServer.requests[0]!.body) as { title: string; type: string; body: string }
      assert.strictEqual(a.type, "failure")
      assert.include(a.body, "Movies/f0.mkv: link refused")
    })
  )

  it.effect("a level filter keeps what is below it out", () =>
    Effect.gen(function* () {
      const server = yield* standIn(apprise)
      yield* withNotify(
        [target(`${server.url}/notify/k`, { events: ["file_complete", "file_failed"], level: "error" })],
        Effect.gen(function* () {
          yield* publishEvent(landed(1))
          yield* publishEvent(failed(2))
          yield* advanceUntil(() => server.requests.length >= 1)
        })
      )
      const a = JSON.parse(server.requests[0]!.body) as { title: string }
      assert.strictEqual(a.title, "dlsync: 1 file failed")
    })
  )
})

describe("notifyTarget", () => {
  it("tells the type from the URL and names it without its path", () => {
    const t = (url: string) => {
      const target = notifyTarget(url, undefined)
      return [target.type, target.url.href, target.name]
    }
    assert.deepStrictEqual(t("ntfys://ntfy.example/alerts"), [
      "ntfy",
      "https://ntfy.example/alerts",
      "notify ntfy (ntfy.example)"
    ])
    assert.deepStrictEqual(t("https://ntfy.sh/alerts")[0], "ntfy")
    assert.deepStrictEqual(t("https://discord.com/api/webhooks/1/secret-token")[0], "discord")
    assert.deepStrictEqual(t("http://apprise:8000/notify/key")[0], "apprise")
    assert.deepStrictEqual(t("https://example.com/hook?token=x"), [
      "webhook",
      "https://example.com/hook?token=x",
      "notify webhook (example.com)"
    ])
  })
})
