/**
 * The SABnzbd surface's jobs: its own releases from the intake, how a call names them
 * (`value` as a comma list of nzo_ids, `nzo_ids`, `category`/`cat`, `search`, `start`/`limit`),
 * and what the surface knows of each besides the intake (its priority, its NZB's size).
 */
import { Effect, Option } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import { Intake, type IntakeItem } from "../intake/Intake.ts"
import { nzbSize } from "./nzbSize.ts"
import { DEFAULT_CATEGORY, inCategories, type JobExtras, nzoIdOf } from "./sabnzbdFormat.ts"
import type { SabnzbdState } from "./sabnzbdState.ts"

/** The releases and categories this surface sees and acts on: its own. */
export const SURFACE = "sabnzbd"

/** This surface's jobs (every one, or those of `ids`, with their files). */
export const jobs = Effect.fnUntraced(function* (ids?: ReadonlyArray<IntakeId>) {
  const intake = yield* Intake
  return yield* intake.list(ids === undefined ? { via: SURFACE } : { via: SURFACE, ids })
})

/** A job's priority and its NZB's size (read once from the NZB, while the service has not said). */
export const extrasOf = Effect.fnUntraced(function* (item: IntakeItem, state: SabnzbdState) {
  const priority = state.priorities.get(item.id) ?? 0
  const known = state.nzbSizes.get(item.id)
  if (known !== undefined || item.size > 0) return { priority, nzbSize: known ?? 0 } satisfies JobExtras
  const source = yield* (yield* Intake).source(item.id)
  const size = Option.match(source, {
    onNone: () => 0,
    onSome: (s) => (s._tag === "NzbFile" ? nzbSize(s.content) : 0)
  })
  state.nzbSizes.set(item.id, size)
  return { priority, nzbSize: size } satisfies JobExtras
})

/** The IDs a `value` names among `items` (a comma list of nzo_ids, or "all"); undefined when it names nothing. */
export const selected = (
  items: ReadonlyArray<IntakeItem>,
  value: string | undefined,
  allowAll = true
): ReadonlyArray<IntakeId> | undefined => {
  const names = commaList(value)
  if (names.length === 0) return undefined
  if (allowAll && names.some((n) => n.toLowerCase() === "all")) return items.map((i) => i.id)
  const wanted = new Set(names)
  return items.filter((i) => wanted.has(nzoIdOf(i.id))).map((i) => i.id)
}

/** The listing filters SABnzbd takes: `category` (or `cat`), `nzo_ids` and `search` (in the name), each a comma list. */
export const matches = (item: IntakeItem, params: ReadonlyMap<string, string>): boolean => {
  const ids = commaList(params.get("nzo_ids"))
  const search = (params.get("search") ?? "").trim().toLowerCase()
  return (
    inCategories(item, commaList(params.get("category") ?? params.get("cat"))) &&
    (ids.length === 0 || ids.includes(nzoIdOf(item.id))) &&
    (search === "" || item.name.toLowerCase().includes(search))
  )
}

export const commaList = (value: string | undefined): ReadonlyArray<string> =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")

/** "", "*", "Default" and "None" are SABnzbd's ways to say no category. */
export const categoryParam = (cat: string | undefined): string => {
  const name = (cat ?? "").trim()
  return name === "" || name === DEFAULT_CATEGORY || name === "Default" || name.toLowerCase() === "none" ? "" : name
}

/** SABnzbd's int_conv: an integer, else 0. */
export const intParam = (value: string | undefined): number => {
  const n = Number.parseInt(value ?? "", 10)
  return Number.isNaN(n) ? 0 : n
}

/** `start`/`limit` as SABnzbd reads them: limit 0 (or none) is everything. */
export const paged = <A>(items: ReadonlyArray<A>, params: ReadonlyMap<string, string>): ReadonlyArray<A> => {
  const start = Math.max(0, intParam(params.get("start")))
  const limit = Math.max(0, intParam(params.get("limit")))
  return limit === 0 ? items.slice(start) : items.slice(start, start + limit)
}
