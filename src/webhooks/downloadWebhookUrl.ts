/**
 * The `webhook_url` a download dlsync creates carries (POST /downloads, the intake): the
 * configured `webhooks.public_url`, the public https address that leads to this daemon's
 * receiver (checked at load as the spec requires), or undefined when none is set, so the
 * download carries no `webhook_url` and its completion is seen by the next poll.
 */
import type { WebhooksSettings } from "../config/webhooksSettings.ts"

export const downloadWebhookUrl = (webhooks: WebhooksSettings): string | undefined => webhooks.public_url ?? undefined
