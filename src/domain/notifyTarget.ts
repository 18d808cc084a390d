/**
 * What a `[[notify]]` URL is (pure): a Discord webhook, an ntfy topic, an Apprise API
 * endpoint, or a generic JSON webhook. `type` in the entry says it outright; otherwise the
 * URL tells: `ntfy://` / `ntfys://` (http / https, as Apprise spells them) or a host named
 * `ntfy.*`; a discord.com `/api/webhooks/` URL; a path ending in `/notify` or `/notify/<key>`
 * (Apprise API); anything else is a generic webhook.
 */
export type TargetType = "webhook" | "ntfy" | "discord" | "apprise"

export interface NotifyTarget {
  readonly type: TargetType
  /** Where to POST (ntfy:// rewritten to http(s)). */
  readonly url: URL
  /** For log lines: the type and host, never the path (webhook URLs carry secrets). */
  readonly name: string
}

export const notifyTarget = (url: string, type: TargetType | undefined): NotifyTarget => {
  const parsed = new URL(url)
  const scheme = parsed.protocol.replace(/:$/, "").toLowerCase()
  const post =
    scheme === "ntfy" || scheme === "ntfys"
      ? new URL(`${scheme === "ntfys" ? "https" : "http"}://${url.slice(url.indexOf("://") + 3)}`)
      : parsed
  const resolved = type ?? inferType(scheme, parsed)
  return { type: resolved, url: post, name: `notify ${resolved} (${post.host})` }
}

const inferType = (scheme: string, url: URL): TargetType => {
  if (scheme === "ntfy" || scheme === "ntfys" || url.hostname.startsWith("ntfy.")) return "ntfy"
  if (/(^|\.)discord(app)?\.com$/.test(url.hostname) && url.pathname.startsWith("/api/webhooks/")) return "discord"
  if (/\/notify(\/[^/]*)?\/?$/.test(url.pathname)) return "apprise"
  return "webhook"
}
