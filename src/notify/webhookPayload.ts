/**
 * An event as a `[[notify]]` webhook carries it: its name in `event`, then its facts, as the
 * README's schema documents them; nothing internal (the `_tag` the code dispatches on). Pure.
 */
import type { MirrorEvent } from "../events/MirrorEvent.ts"

export type WebhookEvent = { readonly event: MirrorEvent["_tag"] } & Readonly<Record<string, unknown>>

export const webhookEvent = (event: MirrorEvent): WebhookEvent => {
  const { _tag, ...facts } = event
  return { event: _tag, ...facts }
}
