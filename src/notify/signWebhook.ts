/**
 * Standard Webhooks signing (pure): the headers a receiver verifies with the
 * `standardwebhooks` library. The signed content is `<id>.<timestamp>.<body>`, the key the
 * base64 after `whsec_` (a secret without that prefix is used as its UTF-8 bytes).
 */
import { createHmac } from "node:crypto"

export interface WebhookHeaders {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

export const signWebhook = (secret: string, id: string, timestampSeconds: number, body: string): WebhookHeaders => {
  const key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8")
  const timestamp = String(Math.floor(timestampSeconds))
  const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` }
}
