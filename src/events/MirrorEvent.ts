/**
 * What happened in the mirror, as data: published at the moment it became true (the store
 * recorded it), consumed by whoever wants to know (media-server refresh, hooks,
 * notifications, the intake). Paths are relative to the mirror root unless named `absolute…`.
 *
 * - file_complete: a download landed in place and the store recorded it.
 * - file_failed: a download gave up for now (the store recorded the reason).
 * - local_moved: a mirrored file or folder was renamed or moved on disk (also a conflict copy:
 *   your version moved aside), so whatever was at `from` is no longer there.
 * - local_removed: a mirrored file or folder went to the trash or was deleted.
 * - deletion_held: the big-delete gate held a removal (newly, not at every pass it stays held).
 * - pass_complete: a reconcile ended; `changed` lists every path it created, replaced, moved
 *   or removed.
 * - download_complete: the last file of one service download landed: every file the feed
 *   reported with that `download_id` is synced on disk (a file outside the mirror's filters
 *   never lands, so its download never completes here).
 * - release_complete: a release a media app (or the blackhole, or `dlsync add`) sent is
 *   complete: every file verified on disk under `path` (src/intake/releaseCompletion.ts).
 * - release_failed: such a release will not complete: the service failed, canceled or lost
 *   it, or its files could not be given a path of their own; `reason` says which.
 */
export type MirrorEvent =
  | FileComplete
  | FileFailed
  | LocalMoved
  | LocalRemoved
  | DeletionHeld
  | PassComplete
  | DownloadComplete
  | ReleaseComplete
  | ReleaseFailed

/** The facts of one remote file at its mirror path. */
export interface FileFacts {
  readonly path: string
  readonly absolutePath: string
  readonly fileId: string
  readonly size: number
  readonly kind: string
  /** The top-level folder the file is in (a category, for the *arr apps); null at the root. */
  readonly category: string | null
}

export interface FileComplete extends FileFacts {
  readonly _tag: "file_complete"
}

export interface FileFailed extends FileFacts {
  readonly _tag: "file_failed"
  readonly reason: string
}

export interface LocalMoved {
  readonly _tag: "local_moved"
  readonly from: string
  readonly to: string
}

export interface LocalRemoved {
  readonly _tag: "local_removed"
  readonly path: string
  readonly how: "trash" | "delete"
}

export interface DeletionHeld {
  readonly _tag: "deletion_held"
  readonly count: number
  readonly mirrored: number
  readonly limit: string
  readonly paths: ReadonlyArray<string>
  readonly reason: string
}

export interface PassComplete {
  readonly _tag: "pass_complete"
  readonly changed: ReadonlyArray<string>
  readonly downloaded: number
  readonly failed: number
}

export interface DownloadComplete {
  readonly _tag: "download_complete"
  readonly downloadId: string
  readonly paths: ReadonlyArray<string>
}

/** Which release: its identity, name, category and the surface that added it. */
export interface ReleaseFacts {
  readonly id: string
  readonly name: string
  /** "" for none. */
  readonly category: string
  readonly via: string
}

export interface ReleaseComplete extends ReleaseFacts {
  readonly _tag: "release_complete"
  /** The release's content root (its file, or its folder) relative to the mirror root. */
  readonly path: string
  readonly absolutePath: string
  readonly size: number
  readonly files: number
}

export interface ReleaseFailed extends ReleaseFacts {
  readonly _tag: "release_failed"
  readonly reason: string
}

export type MirrorEventName = MirrorEvent["_tag"]

/** The events hooks and notifications can be configured for (the local_* ones serve media refresh). */
export const HOOK_EVENTS = [
  "file_complete",
  "file_failed",
  "download_complete",
  "pass_complete",
  "deletion_held",
  "release_complete",
  "release_failed"
] as const satisfies ReadonlyArray<MirrorEventName>
export type HookEventName = (typeof HOOK_EVENTS)[number]

export type EventLevel = "info" | "warn" | "error"

/** How much an event matters, for the notification level filter. */
export const levelOf = (event: MirrorEvent): EventLevel => {
  switch (event._tag) {
    case "file_failed":
    case "release_failed":
      return "error"
    case "deletion_held":
      return "warn"
    case "pass_complete":
      return event.failed > 0 ? "warn" : "info"
    default:
      return "info"
  }
}

/** The category of a mirror path: its first segment when the file sits in a folder. */
export const categoryOf = (path: string): string | null => {
  const slash = path.indexOf("/")
  return slash > 0 ? path.slice(0, slash) : null
}
