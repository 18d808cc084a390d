/**
 * One notification, sent as its target type expects:
 * - webhook: `{type, timestamp, data: {counts, events, omitted}}` JSON, signed with the
 *   entry's `secret` by the Standard Webhooks rules (signWebhook.ts) when it has one; the same
 *   `webhook-id` on every attempt, so a receiver can drop a repeat;
 * - ntfy: the body as the message, `Title`, `Priority` (high for errors) and `Tags` headers;
 * - Discord: `{content}` (at most DISCORD_MAX characters);
 * - Apprise API: `{title, body, type}` (info, warning, failure).
 */
import { Clock, Effect, Random, Redacted } from "effect"
import type { NotifyTarget } from "../domain/notifyTarget.ts"
import type { EventLevel, MirrorEvent } from "../events/MirrorEvent.ts"
import type { Outbound } from "../outbound/Outbound.ts"
import { type DeliveryFailed, exchangeOk } from "../outbound/retryDelivery.ts"
import type { NotifyMessage } from "./notifyMessage.ts"
import { signWebhook } from "./signWebhook.ts"
import { webhookEvent } from "./webhookPayload.ts"

/** Events sent in full in one webhook payload; the rest are counted. */
export const WEBHOOK_MAX_EVENTS = 100
/** Discord refuses longer content. */
export const DISCORD_MAX = 2000

/** The attempt to repeat until it succeeds (a webhook's id is drawn once, here). */
export const notificationAttempt = Effect.fnUntraced(function* (
  target: NotifyTarget,
  secret: Redacted.Redacted<string> | null,
  events: ReadonlyArray<MirrorEvent>,
  message: NotifyMessage
): Effect.fn.Return<Effect.Effect<void, DeliveryFailed, Outbound>> {
  const post = (headers: Record<string, string>, body: string) =>
    Effect.asVoid(exchangeOk({ method: "POST", url: target.url, headers, body }))
  const json = { "content-type": "application/json" }
  switch (target.type) {
    case "ntfy":
      return post(
        {
          "content-type": "text/plain; charset=utf-8",
          title: asciiHeader(message.title),
          priority: message.level === "error" ? "high" : "default",
          tags: NTFY_TAGS[message.level]
        },
        message.body
      )
    case "discord": {
      const text = `**${message.title}**\n${message.body}`
      const content = text.length > DISCORD_MAX ? `${text.slice(0, DISCORD_MAX - 1)}…` : text
      return post(json, JSON.stringify({ content }))
    }
    case "apprise":
      return post(
        json,
        JSON.stringify({ title: message.title, body: message.body, type: APPRISE_TYPES[message.level] })
      )
    case "webhook": {
      let id = "msg_"
      for (let i = 0; i < 4; i++) id += (yield* Random.nextIntBetween(0, 2 ** 30)).toString(36).padStart(6, "0")
      const counts: Record<string, number> = {}
      for (const e of events) counts[e._tag] = (counts[e._tag] ?? 0) + 1
      return Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const body = JSON.stringify({
          type: "dlsync.events",
          timestamp: new Date(now).toISOString(),
          data: {
            title: message.title,
            level: message.level,
            counts,
            events: events.slice(0, WEBHOOK_MAX_EVENTS).map(webhookEvent),
            omitted: Math.max(0, events.length - WEBHOOK_MAX_EVENTS)
          }
        })
        const signed = secret === null ? {} : signWebhook(Redacted.value(secret), id, now / 1000, body)
        yield* post({ ...json, "webhook-id": id, ...signed }, body)
      })
    }
  }
})

const NTFY_TAGS: Readonly<Record<EventLevel, string>> = { info: "information_source", warn: "warning", error: "x" }
const APPRISE_TYPES: Readonly<Record<EventLevel, string>> = { info: "info", warn: "warning", error: "failure" }

/** HTTP header values are Latin-1: other characters become "?". */
const asciiHeader = (text: string): string => text.replace(/[^\x20-\x7e]/g, "?")
