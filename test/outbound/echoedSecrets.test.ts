/**
 * Receivers that echo what they were sent in their error answers (the request line with its
 * path and query, every header) never get a secret into the log: every sender (Jellyfin,
 * Plex, ntfy, Discord, a webhook, the Apprise API, Sonarr) against a real local server that
 * answers 400 with such an echo, through the real logger built as `main.ts` builds it from a
 * real configuration file; and through a logger that knows no secret at all, since a
 * sender's failure reason is also printed without a logger (`dlsync doctor`).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, Option, Redacted } from "effect"
import { TestConsole } from "effect/testing"
import { SONARR } from "../../src/arr/ArrApp.ts"
import { checkStatus } from "../../src/arr/arrRequest.ts"
import { type AppConfig, loadConfig } from "../../src/config/loadConfig.ts"
import { notifyTarget } from "../../src/domain/notifyTarget.ts"
import { configSecrets } from "../../src/log/configSecrets.ts"
import { makeLogger } from "../../src/log/logLayer.ts"
import { makeScrubber, type Scrubber } from "../../src/log/Scrubber.ts"
import { jellyfinRefresh } from "../../src/mediaservers/jellyfin.ts"
import { plexRefresh } from "../../src/mediaservers/plex.ts"
import { notifyMessage } from "../../src/notify/notifyMessage.ts"
import { notificationAttempt } from "../../src/notify/sendNotification.ts"
import { Outbound, SNIPPET_CHARS } from "../../src/outbound/Outbound.ts"
import { retryDelivery } from "../../src/outbound/retryDelivery.ts"
import { advanceUntil, type Recorded, standIn } from "../standins/recordingServer.ts"

/** What each receiver must never see again in a log line (each at least 8 characters). */
const SECRETS = {
  serviceKey: "dls_service_key_0451",
  jellyfinKey: "jellyfinApiKey0123456789",
  plexToken: "plexTokenAbCdEf123456",
  ntfyTopic: "dlsync-alerts-7f3k2m9q",
  discordId: "123456789012345678",
  discordToken: "DiscordTok3n-abcdefGHIJ",
  webhookQuery: "whq_query_token_98765",
  webhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  appriseKey: "apprisekey-4242abcd",
  sonarrKey: "sonarrkey0123456789abcdef"
} as const

/** A receiver that refuses everything, echoing the request line (raw and decoded) and every header. */
const echo = (r: Recorded) => ({
  status: 400,
  contentType: "text/plain",
  body: [
    `Cannot ${r.method} ${r.url.pathname}${r.url.search} (${decodeURIComponent(r.url.pathname)})`,
    JSON.stringify(r.headers),
    "x".repeat(10_000)
  ].join("\n")
})

const configFile = (receiver: string): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-echo-"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(
    file,
    `[service]
base_url = "https://example.test/api/v1"
api_key = "${SECRETS.serviceKey}"

[mirror]
root = "media"

[jellyfin]
url = "${receiver}/jellyfin"
api_key = "${SECRETS.jellyfinKey}"

[plex]
url = "${receiver}"
token = "${SECRETS.plexToken}"

[[notify]]
url = "${receiver}/${SECRETS.ntfyTopic}"
type = "ntfy"

[[notify]]
url = "${receiver}/api/webhooks/${SECRETS.discordId}/${SECRETS.discordToken}"
type = "discord"

[[notify]]
url = "${receiver}/hooks/receiver?token=${SECRETS.webhookQuery}"
type = "webhook"
secret = "${SECRETS.webhookSecret}"

[[notify]]
url = "${receiver}/notify/${SECRETS.appriseKey}"
type = "apprise"

[sonarr]
url = "${receiver}"
api_key = "${SECRETS.sonarrKey}"
`
  )
  return file
}

/** Every sender once against the echoing receiver, each failure logged as the program logs it. */
const everySender = (config: AppConfig) =>
  Effect.gen(function* () {
    const updates = [{ folder: "/srv/media/TV/Show", type: "Created" as const }]
    const events = [
      {
        _tag: "file_failed" as const,
        path: "TV/Show/e1.mkv",
        absolutePath: "/srv/media/TV/Show/e1.mkv",
        fileId: "f_1",
        size: 1,
        kind: "video" as const,
        category: "TV",
        reason: "link refused"
      }
    ]
    const deliveries = [
      retryDelivery("jellyfin", "refresh", jellyfinRefresh(config.jellyfin ?? assert.fail("jellyfin"), updates)),
      retryDelivery("plex", "refresh", plexRefresh(config.plex ?? assert.fail("plex"), updates)),
      ...config.notify.map((settings) =>
        Effect.gen(function* () {
          const target = notifyTarget(Redacted.value(settings.url), settings.type)
          const attempt = yield* notificationAttempt(target, settings.secret, events, notifyMessage(events))
          yield* retryDelivery(target.name, "notification", attempt)
        })
      )
    ]
    for (const delivery of deliveries) {
      const running = yield* Effect.forkChild(delivery)
      yield* advanceUntil(() => running.pollUnsafe() !== undefined)
      yield* Fiber.join(running)
    }
    const refused = yield* Effect.flip(checkStatus({ app: SONARR, settings: config.sonarr ?? assert.fail("sonarr") }))
    yield* Effect.logWarning(`sonarr: ${refused.problem}`)
  }).pipe(Effect.provide(Outbound.layer))

const logLines = (config: AppConfig, scrubber: Scrubber) =>
  Effect.gen(function* () {
    yield* everySender(config).pipe(
      Effect.provide(Logger.layer([makeLogger({ format: "text", colors: false, journald: false }, scrubber)]))
    )
    return (yield* TestConsole.errorLines).map(String)
  }).pipe(Effect.provide(Layer.fresh(TestConsole.layer)))

const load = (file: string) =>
  loadConfig({ path: Option.some(file), env: {}, cwd: Path.dirname(file) }).pipe(Effect.provide(NodeServices.layer))

const assertClean = (lines: ReadonlyArray<string>) => {
  assert.isAtLeast(lines.length, 8, lines.join("\n"))
  for (const [name, secret] of Object.entries(SECRETS)) {
    for (const line of lines) assert.notInclude(line, secret, `${name} in: ${line}`)
  }
  assert.isTrue(
    lines.some((l) => l.includes("HTTP 400: Cannot POST")),
    "the start of the answer is kept"
  )
  for (const line of lines) assert.isBelow(line.length, SNIPPET_CHARS + 400, "the answer is cut")
}

describe("outbound error answers in the log", () => {
  it.effect("no secret, URL path or token a receiver echoes reaches a line of the program's logger", () =>
    Effect.gen(function* () {
      const receiver = yield* standIn(echo)
      const config = yield* load(configFile(receiver.url))
      assertClean(yield* logLines(config, makeScrubber(configSecrets(config))))
    })
  )

  it.effect("each sender's failure itself holds none of them: a logger that knows no secret shows none", () =>
    Effect.gen(function* () {
      const receiver = yield* standIn(echo)
      const config = yield* load(configFile(receiver.url))
      assertClean(yield* logLines(config, makeScrubber()))
    })
  )
})
