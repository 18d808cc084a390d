/**
 * The release events reach real local receivers: a Standard Webhooks receiver (verified with
 * the standardwebhooks library) gets the documented JSON (each event named in `event`, no
 * internal field), ntfy gets a text that names releases and downloads, never a `dl_…` id. By
 * default a target hears of a failed release.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
import type { MirrorEvent } from "../../src/events/MirrorEvent.ts"
import { publishEvent } from "../../src/events/MirrorEvents.ts"
import { advanceUntil, ntfy, standIn, webhookReceiver } from "../standins/recordingServer.ts"
import { target, withNotify } from "./notifyTargets.ts"

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

const releaseFailed: MirrorEvent = {
  _tag: "release_failed",
  id: "btih:0123456789abcdef0123456789abcdef01234567",
  name: "Show.S01E02.1080p",
  category: "tv",
  via: "qbittorrent",
  reason: "the service failed it: no seeds"
}
const releaseComplete: MirrorEvent = {
  _tag: "release_complete",
  id: "sha256:ab",
  name: "Film.2024",
  category: "movies",
  via: "sabnzbd",
  path: "movies/Film.2024",
  absolutePath: "/mirror/movies/Film.2024",
  size: 5_000,
  files: 3
}
const downloadComplete: MirrorEvent = {
  _tag: "download_complete",
  downloadId: "dl_7f3a",
  paths: ["movies/Film.2024/film.mkv", "movies/Film.2024/Subs/en.srt"]
}

describe("release events in notifications", () => {
  it.effect("a webhook gets each event named in `event` with its facts, and no internal field", () =>
    Effect.gen(function* () {
      const verified: Array<unknown> = []
      yield* TestClock.setTime(Date.now())
      const receiver = yield* standIn(webhookReceiver(SECRET, verified))
      yield* withNotify(
        [
          target(`${receiver.url}/hooks`, {
            secret: Redacted.make(SECRET),
            events: ["release_complete", "release_failed", "download_complete"]
          })
        ],
        Effect.gen(function* () {
          for (const event of [releaseFailed, releaseComplete, downloadComplete]) yield* publishEvent(event)
          yield* advanceUntil(() => receiver.requests.length >= 1)
        })
      )
      assert.strictEqual(verified.length, 1, "the signature verifies")
      const body = JSON.parse(receiver.requests[0]?.body ?? "{}")
      assert.strictEqual(body.type, "dlsync.events")
      assert.deepStrictEqual(body.data.counts, { release_failed: 1, release_complete: 1, download_complete: 1 })
      // Each event as published, its name under `event` and nothing else added or left out.
      const named = (event: MirrorEvent) => {
        const { _tag, ...facts } = event
        return { event: _tag, ...facts }
      }
      assert.deepStrictEqual(body.data.events, [releaseFailed, releaseComplete, downloadComplete].map(named))
      assert.deepStrictEqual(Object.keys(body.data.events[0]), ["event", "id", "name", "category", "via", "reason"])
      assert.notInclude(receiver.requests[0]?.body ?? "", "_tag")
      assert.strictEqual(body.data.level, "error")
    })
  )

  it.effect("ntfy names the releases and downloads (never a dl_ id); by default a failed release is sent", () =>
    Effect.gen(function* () {
      const server = yield* standIn(ntfy)
      const url = `ntfy://${server.url.slice("http://".length)}/alerts`
      yield* withNotify(
        [target(url), target(url, { events: ["release_complete", "download_complete"] })],
        Effect.gen(function* () {
          for (const event of [releaseFailed, releaseComplete, downloadComplete]) yield* publishEvent(event)
          yield* advanceUntil(() => server.requests.length >= 2)
        })
      )
      const bodies = server.requests.map((r) => [r.headers.title, r.body]).sort()
      assert.deepStrictEqual(bodies, [
        [
          "dlsync: 1 release complete, 1 download complete",
          "1 release complete:\n- Film.2024 (movies)\n\nDownloads complete:\n- movies/Film.2024"
        ],
        ["dlsync: 1 release failed", "1 release failed:\n- Show.S01E02.1080p (tv): the service failed it: no seeds"]
      ])
      for (const request of server.requests) assert.notInclude(request.body, "dl_7f3a")
    })
  )
})
