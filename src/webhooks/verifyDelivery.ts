/**
 * Whether one webhook delivery is the service's, exactly as the spec's "Signature" section
 * says. Pure: the caller gives the headers, the raw body bytes, the keys and the time.
 *
 *   headers well formed? ──no──► 400
 *        │ yes
 *   timestamp within TOLERANCE_SECONDS of now, either way? ──no──► 400
 *        │ yes
 *   some `v1,<sig>` entry = HMAC-SHA256(key, id "." timestamp "." body) for some key? ──no──► 401
 *        │ yes
 *   Verified (id, timestamp)
 *
 * Invariants:
 * - The signed message is the raw body bytes, never a re-encoding of them.
 * - `webhook-timestamp` is whole seconds in plain decimal digits ("1e9", " 123", "0x10",
 *   "1.5", "+1", "01" are malformed), checked before any HMAC is computed.
 * - Each `v1` signature is strict base64 (see domain/WebhookSecret.ts) and compared in constant
 *   time on equal lengths; entries of other versions, or that do not decode, never match.
 *   Any matching entry under any key verifies (rotation on either side).
 * - A rejection's reason is fixed text: it never echoes a header, the body or a key.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { strictBase64 } from "../domain/WebhookSecret.ts"

/** The spec's receiver recommendation: five minutes either way. */
export const TOLERANCE_SECONDS = 300

/** The three delivery headers as received (undefined when absent). */
export interface DeliveryHeaders {
  readonly id: string | undefined
  readonly timestamp: string | undefined
  readonly signature: string | undefined
}

export type Verdict =
  | { readonly _tag: "Verified"; readonly id: string; readonly timestamp: number }
  | { readonly _tag: "Rejected"; readonly status: 400 | 401; readonly reason: string }

export const verifyDelivery = (input: {
  readonly headers: DeliveryHeaders
  readonly body: Uint8Array
  readonly keys: ReadonlyArray<Uint8Array>
  readonly nowSeconds: number
}): Verdict => {
  const { id, timestamp, signature } = input.headers
  if (id === undefined || !WEBHOOK_ID.test(id)) return rejected(400, "missing or malformed webhook-id")
  if (timestamp === undefined || !TIMESTAMP.test(timestamp)) {
    return rejected(400, "missing or malformed webhook-timestamp (whole seconds expected)")
  }
  if (signature === undefined || signature.trim() === "") return rejected(400, "missing webhook-signature")
  const seconds = Number(timestamp)
  if (!Number.isSafeInteger(seconds) || Math.abs(input.nowSeconds - seconds) > TOLERANCE_SECONDS) {
    return rejected(400, "webhook-timestamp is more than five minutes from this host's clock")
  }
  const signatures = signature
    .split(" ")
    .flatMap((entry) => {
      const comma = entry.indexOf(",")
      return comma > 0 && entry.slice(0, comma) === "v1" ? [strictBase64(entry.slice(comma + 1))] : []
    })
    .filter((bytes) => bytes !== undefined)
  const prefix = Buffer.from(`${id}.${timestamp}.`, "latin1")
  const matches = input.keys.some((key) => {
    const expected = createHmac("sha256", key).update(prefix).update(input.body).digest()
    return signatures.some((given) => given.length === expected.length && timingSafeEqual(given, expected))
  })
  return matches ? { _tag: "Verified", id, timestamp: seconds } : rejected(401, "signature does not match")
}

// ---------------------------------------------------------------------------------------

/** Visible ASCII, at most 256 characters: the id is stored for deduplication. */
const WEBHOOK_ID = /^[\x21-\x7e]{1,256}$/

/** Plain decimal, no sign, no leading zero, at most 16 digits (beyond that it is no time of ours). */
const TIMESTAMP = /^(?:0|[1-9][0-9]{0,15})$/

const rejected = (status: 400 | 401, reason: string): Verdict => ({ _tag: "Rejected", status, reason })
