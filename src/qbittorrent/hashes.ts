/**
 * Torrent hashes as the qBittorrent API carries them, and the intake identities behind
 * them. The apps send a v1 info-hash (40 hex digits, any case; `|` between several, or
 * `all`); qBittorrent identifies a v2-only torrent by the first 40 digits of its v2 hash,
 * so a 64-digit hash is cut the same way. A part that is not a hash names no torrent (as in
 * qBittorrent, whose actions skip it). Answers always carry lowercase. Pure.
 */
import { IntakeId } from "../domain/IntakeId.ts"

export type HashSelection = { readonly _tag: "All" } | { readonly _tag: "Ids"; readonly ids: ReadonlyArray<IntakeId> }

const BTIH = "btih:"

/** Parses a `hashes` (or `hash`) parameter; parts that are not hashes are left out. */
export const parseHashes = (text: string): HashSelection => {
  const trimmed = text.trim()
  if (trimmed.toLowerCase() === "all") return { _tag: "All" }
  const ids: Array<IntakeId> = []
  for (const part of trimmed.split("|")) {
    const hash = part.trim()
    if (hash === "") continue
    const id = idOfHash(hash)
    if (id !== undefined) ids.push(id)
  }
  return { _tag: "Ids", ids }
}

/** The intake identity of a hash, or undefined when it is not one. */
export const idOfHash = (hash: string): IntakeId | undefined =>
  /^[0-9a-f]{40}$/i.test(hash) || /^[0-9a-f]{64}$/i.test(hash)
    ? IntakeId.make(`${BTIH}${hash.slice(0, 40).toLowerCase()}`)
    : undefined

/** The hash the API shows for an intake identity; undefined for an item that is not a torrent (an NZB, a URL). */
export const hashOfId = (id: IntakeId): string | undefined => (id.startsWith(BTIH) ? id.slice(BTIH.length) : undefined)
