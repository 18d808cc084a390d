/**
 * The `[webhooks]` section: the receiver of the service's signed webhook deliveries
 * (src/webhooks/), its secrets and the public address downloads dlsync creates announce.
 * The keys' schemas are `sections.webhooks` in fields.ts; loadConfig.ts calls
 * `webhooksSettings` to resolve `secret_file` and check the keys against each other.
 * config.example.toml documents each key.
 *
 * Rules (configuration errors, exit 78):
 * - `secret` (one text, or a list while the service's secret rotates) or `secret_file`
 *   (one secret per line), not both; each is "whsec_" + strict base64 (never echoed);
 * - `listen` other than "off" needs a secret: an unverifiable delivery is refused anyway;
 * - `public_url` is a public https URL (the spec's rule for `webhook_url`) and needs
 *   `listen`: nothing else verifies what is delivered there.
 */
import { Effect, Redacted, Schema } from "effect"
import { WEBHOOK_SECRET_EXPECTED, webhookKey } from "../domain/WebhookSecret.ts"
import { webhookUrlProblem } from "../domain/webhookUrl.ts"
import type { ListenSetting } from "../server/ListenAddress.ts"
import type { DecodedConfig } from "./fields.ts"

export interface WebhooksSettings {
  /** Where the receiver listens; "off" (the default): no receiver. */
  readonly listen: ListenSetting
  /** Every secret a delivery may be signed with (several while one rotates); empty when off. */
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  /** The `webhook_url` of the downloads dlsync creates; null: they carry none. */
  readonly public_url: string | null
}

/** One secret in the configuration: checked as text, then kept Redacted. */
const WebhookSecret = Schema.RedactedFromValue(
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter((s: string) => webhookKey(s) !== undefined, {
        expected: WEBHOOK_SECRET_EXPECTED
      })
    )
  )
)

/** `secret`: one secret, or a non-empty list of them. */
export const WebhookSecrets = Schema.Union([
  WebhookSecret,
  Schema.Array(WebhookSecret).pipe(Schema.check(Schema.isMinLength(1)))
])

/** `public_url`: what the spec accepts as `webhook_url`. */
export const PublicHttpsUrl = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => webhookUrlProblem(s) ?? true, {
      expected: "a public https URL"
    })
  )
)

type Raw = DecodedConfig["webhooks"]

/** A problem with one key of the section; the loader says where the key was set. */
export interface WebhooksProblem {
  readonly key: string
  readonly message: string
}

/**
 * The section as the program uses it. `readSecretFile` reads `secret_file` (resolved like
 * every path of the configuration); its failure is the loader's.
 */
export const webhooksSettings = <E>(
  raw: Raw,
  readSecretFile: (path: string) => Effect.Effect<{ readonly path: string; readonly text: string }, E>
): Effect.Effect<WebhooksSettings, E | WebhooksProblem> =>
  Effect.gen(function* () {
    const listen = raw.listen
    let secrets: ReadonlyArray<Redacted.Redacted<string>> =
      raw.secret === undefined ? [] : Redacted.isRedacted(raw.secret) ? [raw.secret] : raw.secret
    if (raw.secret_file !== undefined) {
      if (raw.secret !== undefined) {
        return yield* Effect.fail(
          problem("webhooks.secret_file", "set webhooks.secret or webhooks.secret_file, not both")
        )
      }
      const file = yield* readSecretFile(raw.secret_file)
      const lines = file.text.split(/\r?\n/).map((line) => line.trim())
      const bad = lines.findIndex((line) => line !== "" && webhookKey(line) === undefined)
      if (bad >= 0) {
        return yield* Effect.fail(
          problem("webhooks.secret_file", `line ${bad + 1} of ${file.path} is not ${WEBHOOK_SECRET_EXPECTED}`)
        )
      }
      secrets = lines.filter((line) => line !== "").map((line) => Redacted.make(line))
      if (secrets.length === 0) return yield* Effect.fail(problem("webhooks.secret_file", `${file.path} is empty`))
    }
    if (listen !== "off" && secrets.length === 0) {
      return yield* Effect.fail(
        problem(
          "webhooks.listen",
          "needs webhooks.secret or webhooks.secret_file (the service's whsec_… signing secret) to verify deliveries"
        )
      )
    }
    const publicUrl = raw.public_url ?? null
    if (publicUrl !== null && listen === "off") {
      return yield* Effect.fail(
        problem("webhooks.public_url", 'needs webhooks.listen: the receiver it leads to (e.g. "127.0.0.1:7661")')
      )
    }
    return { listen, secrets, public_url: publicUrl }
  })

const problem = (key: string, message: string): WebhooksProblem => ({ key, message })

/**
 * The `webhook_url` a download dlsync creates carries (POST /downloads, the intake): the
 * configured `webhooks.public_url`, the public https address that leads to this daemon's
 * receiver (checked at load as the spec requires), or undefined when none is set, so the
 * download carries no `webhook_url` and its completion is seen by the next poll.
 */
export const downloadWebhookUrl = (webhooks: WebhooksSettings): string | undefined => webhooks.public_url ?? undefined
