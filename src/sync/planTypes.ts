/** The planner's contract: what it is given (config, input) and what it returns (actions). */
import type { FileId } from "../domain/FileId.ts"
import type { LocalEntry, LocallyDeleted, LocalStat } from "../domain/LocalEntry.ts"
import type { ItemType, RemoteItem } from "../domain/RemoteItem.ts"
import type { TreeConfig } from "./tree.ts"

export interface PlanConfig extends TreeConfig {
  readonly onRemoteDelete: "trash" | "delete" | "keep"
  readonly onLocalDelete: "respect" | "redownload"
  /**
   * The most files one pass may remove. Null: the default rule, which holds a pass that
   * would remove more than 50 files AND more than 10 % of the mirrored files.
   */
  readonly maxDelete: number | null
}

export interface PlanInput {
  readonly remote: Iterable<RemoteItem>
  readonly local: ReadonlyArray<LocalEntry>
  /**
   * Fresh lstats by relative path. Must cover every entry path and every path the remote
   * tree maps to; a path absent here is taken as absent from disk.
   */
  readonly disk: ReadonlyMap<string, LocalStat>
  readonly locallyDeleted: ReadonlyArray<LocallyDeleted>
  readonly config: PlanConfig
  readonly now: Date
  /** The store holds a complete listing made with the current filters (no rebuild running). */
  readonly listingComplete: boolean
  /**
   * The store was lost: adopt what matches (the remote size and the mtime dlsync sets, see
   * `looksLanded`), keep the rest as conflict copies and fetch the remote, remove nothing.
   */
  readonly adoptOnly: boolean
  readonly allowBigDelete: boolean
  /**
   * Remote ids whose deletion on the service dlsync itself decided (remote cleanup, marked
   * before its POST /files/delete). When such an item is gone, its entry is forgotten and
   * the local copy kept: the mirror keeps what it cleaned up. Absent: none.
   */
  readonly cleanedUp?: ReadonlySet<string>
}

export type SkipCode =
  | "locked"
  | "filtered"
  | "too_big"
  | "broken_parent"
  | "too_deep"
  | "locally_deleted"
  | "occupied"
  | "modified_locally"
  | "parent_blocked"

export type Action =
  | { readonly _tag: "Mkdir"; readonly path: string; readonly item: RemoteItem; readonly reason: string }
  | {
      readonly _tag: "Download"
      readonly path: string
      readonly item: RemoteItem
      /** What must be at `path` when the download lands: null = nothing. */
      readonly replace: LocalStat | null
      readonly reason: string
    }
  | {
      readonly _tag: "Rename"
      readonly from: string
      readonly to: string
      readonly remoteId: FileId
      readonly type: ItemType
      /** The item's new remote fields to record, or null for a move into `.dlsync/moving`. */
      readonly item: RemoteItem | null
      readonly expected: LocalStat
      readonly reason: string
    }
  | {
      readonly _tag: "ConflictCopy"
      readonly from: string
      readonly to: string
      readonly remoteId: FileId
      readonly expected: LocalStat
      readonly reason: string
    }
  | {
      readonly _tag: "Trash" | "Delete"
      readonly path: string
      readonly remoteId: FileId
      readonly expected: LocalStat
      readonly reason: string
    }
  | {
      /** Removed only if empty; otherwise left in place and forgotten. */
      readonly _tag: "RemoveFolder"
      readonly path: string
      readonly remoteId: FileId
      readonly expected: LocalStat
      readonly reason: string
    }
  | {
      readonly _tag: "Adopt"
      readonly path: string
      readonly item: RemoteItem
      readonly stat: LocalStat
      readonly reason: string
    }
  | { readonly _tag: "Refresh"; readonly path: string; readonly item: RemoteItem; readonly reason: string }
  | { readonly _tag: "MarkLocallyDeleted"; readonly path: string; readonly remoteId: FileId; readonly reason: string }
  | {
      readonly _tag: "Forget"
      readonly what: "entry" | "marker"
      readonly path: string
      readonly remoteId: FileId
      readonly reason: string
    }
  | {
      readonly _tag: "HoldDeletes"
      readonly count: number
      readonly mirrored: number
      readonly limit: string
      readonly paths: ReadonlyArray<string>
      readonly reason: string
    }
  | {
      readonly _tag: "Skip"
      readonly code: SkipCode
      readonly path: string | null
      readonly remoteId: FileId
      readonly reason: string
    }

export type ActionTag = Action["_tag"]
