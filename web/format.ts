/**
 * How the page writes numbers and times: the CLI's own units (src/transfer/progressFormat.ts,
 * the same as `dlsync status`), counts grouped alike in every locale, and times in the
 * browser's locale and zone.
 */
export { formatBytes, formatEta, formatRate } from "../src/transfer/progressFormat.ts"

/** A time as the reader's clock shows it; "never" for none. */
export const formatTime = (iso: string | number | null): string =>
  iso === null ? "never" : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" })

/** How long ago (or from now) a time is, roughly: "3 min ago", "in 20 s". */
export const relativeTime = (iso: string | number | null, now: number): string => {
  if (iso === null) return "never"
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000)
  const abs = Math.abs(seconds)
  const text =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86_400
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86_400)} d`
  return seconds < 0 ? `${text} ago` : seconds === 0 ? "now" : `in ${text}`
}

/**
 * A whole number, its digits from five on grouped by three with a narrow no-break space
 * ("12 345", ISO 80000-1): read alike in every locale, and with no locale data, whose first
 * use in a page (Intl's number formats) costs more than the overview's whole render.
 */
export const formatCount = (n: number): string =>
  Math.abs(n) < 10_000 ? String(n) : String(n).replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f")
