/**
 * What holds in a configuration that loads but may not do what its author expects: a value
 * of the file that a `DLSYNC_*` variable replaces (the environment wins, as documented, but
 * an image or a unit may set one the user also writes), and a webhook receiver that no
 * delivery can reach. `config check` prints each as a comment; `dlsync run` logs each as a
 * warning at start. One line each.
 */
import type { AppConfig } from "./loadConfig.ts"

export const configNotices = (config: Pick<AppConfig, "overrides" | "webhooks">): ReadonlyArray<string> => [
  ...overridesNotice(config),
  ...webhooksNotice(config)
]

const overridesNotice = ({ overrides }: Pick<AppConfig, "overrides">): ReadonlyArray<string> =>
  overrides.length === 0
    ? []
    : [
        `the environment overrides the configuration file: ${overrides
          .map((o) => `${o.variable} replaces ${o.key} of ${o.fileSource}`)
          .join("; ")} (unset the variable, or remove the key from the file)`
      ]

const webhooksNotice = ({ webhooks }: Pick<AppConfig, "webhooks">): ReadonlyArray<string> =>
  webhooks.listen !== "off" && webhooks.public_url === null
    ? [
        "webhooks.listen is set without webhooks.public_url: the downloads dlsync creates carry no webhook_url, " +
          "so the service delivers nothing to the receiver; set webhooks.public_url to the public https address that leads to it"
      ]
    : []
