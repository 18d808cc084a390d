/**
 * Tags, for tools that tag torrents and read them back (qbit_manage, autobrr, cross-seed):
 * the tags of each torrent and every tag created, in memory; they do not survive a restart
 * (dlsync neither sorts nor limits by tag).
 */
import type { IntakeId } from "../domain/IntakeId.ts"

export interface TorrentTags {
  /** A torrent's tags, sorted. */
  readonly of: (id: IntakeId) => ReadonlyArray<string>
  /** Every tag created, sorted. */
  readonly all: () => ReadonlyArray<string>
  readonly create: (tags: ReadonlyArray<string>) => void
  /** Removes the tags everywhere. */
  readonly delete: (tags: ReadonlyArray<string>) => void
  /** Tags a torrent, creating the tags it names. */
  readonly add: (id: IntakeId, tags: ReadonlyArray<string>) => void
  /** Untags a torrent: the tags named, or all of them. */
  readonly remove: (id: IntakeId, tags: ReadonlyArray<string> | undefined) => void
  /** Forgets a removed torrent. */
  readonly forget: (id: IntakeId) => void
}

export const makeTorrentTags = (): TorrentTags => {
  const byId = new Map<IntakeId, Set<string>>()
  const known = new Set<string>()
  return {
    of: (id) => [...(byId.get(id) ?? [])].sort(),
    all: () => [...known].sort(),
    create: (tags) => {
      for (const tag of tags) known.add(tag)
    },
    delete: (tags) => {
      for (const tag of tags) {
        known.delete(tag)
        for (const set of byId.values()) set.delete(tag)
      }
    },
    add: (id, tags) => {
      const set = byId.get(id) ?? new Set<string>()
      for (const tag of tags) {
        set.add(tag)
        known.add(tag)
      }
      byId.set(id, set)
    },
    remove: (id, tags) => {
      if (tags === undefined) byId.delete(id)
      else for (const tag of tags) byId.get(id)?.delete(tag)
    },
    forget: (id) => {
      byId.delete(id)
    }
  }
}
