/** What the intake needs from the configuration: the mirror root and `[categories.*]`. */
import { Context, Layer } from "effect"
import type { CategorySettings } from "../config/categoriesSettings.ts"
import type { AppConfig } from "../config/loadConfig.ts"

export class IntakeSettings extends Context.Service<
  IntakeSettings,
  {
    /** The mirror root, absolute: a category's folder is `<root>/<category>`. */
    readonly root: string
    readonly categories: Readonly<Record<string, CategorySettings>>
  }
>()("dlsync/intake/IntakeSettings") {
  static readonly layer = (settings: IntakeSettings["Service"]): Layer.Layer<IntakeSettings> =>
    Layer.succeed(IntakeSettings, IntakeSettings.of(settings))

  static readonly fromConfig = (config: Pick<AppConfig, "mirror" | "categories">): Layer.Layer<IntakeSettings> =>
    IntakeSettings.layer({ root: config.mirror.root, categories: config.categories })
}
