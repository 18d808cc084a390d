/** What the intake needs from the configuration: the mirror root, `[categories.*]` and the downloads' `webhook_url`. */
import { Context, Layer } from "effect"
import type { CategorySettings } from "../config/categoriesSettings.ts"
import type { AppConfig } from "../config/loadConfig.ts"
import { downloadWebhookUrl } from "../config/webhooksSettings.ts"

export class IntakeSettings extends Context.Service<
  IntakeSettings,
  {
    /** The mirror root, absolute: a category's folder is `<root>/<category>`. */
    readonly root: string
    readonly categories: Readonly<Record<string, CategorySettings>>
    /** `webhook_url` for the downloads the intake creates (webhooks.public_url), if any. */
    readonly webhookUrl?: string | undefined
  }
>()("dlsync/intake/IntakeSettings") {
  static readonly layer = (settings: IntakeSettings["Service"]): Layer.Layer<IntakeSettings> =>
    Layer.succeed(IntakeSettings, IntakeSettings.of(settings))

  static readonly fromConfig = (
    config: Pick<AppConfig, "mirror" | "categories" | "webhooks">
  ): Layer.Layer<IntakeSettings> =>
    IntakeSettings.layer({
      root: config.mirror.root,
      categories: config.categories,
      webhookUrl: downloadWebhookUrl(config.webhooks)
    })
}
