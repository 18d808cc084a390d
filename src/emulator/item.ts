/**
 * The items of the emulated account: a file or folder as the tree keeps it, the shapes that
 * create and edit one, and the error a tree operation fails with.
 */
import type { Kind } from "./kinds.ts"
import type { Media } from "./media.ts"

export type ItemType = "file" | "folder"

export interface PosterSpec {
  readonly width: number
  readonly height: number
  readonly dominantColor: string
}

export interface Item {
  readonly id: string
  readonly type: ItemType
  parentId: string | null
  downloadId: string | null
  name: string
  kind: Kind
  mimeType: string
  sizeBytes: number
  locked: boolean
  /** Microseconds; expiry of the item in the account. */
  expiresAt: number
  readonly createdAt: number
  updatedAt: number
  /** Full media metadata (video files only). */
  media: Media | null
  poster: PosterSpec | null
  /** Bumped whenever the bytes change: CDN ETags and generated content derive from it. */
  contentVersion: number
  contentModifiedAt: number
  seq: number
}

export interface Tombstone {
  readonly id: string
  readonly parentId: string | null
  readonly seq: number
}

export interface NewItem {
  readonly type: ItemType
  readonly parentId: string | null
  readonly name: string
  readonly kind: Kind
  readonly mimeType: string
  readonly sizeBytes?: number | undefined
  readonly downloadId?: string | null | undefined
  readonly locked?: boolean | undefined
  readonly expiresAt?: number | undefined
  readonly media?: Media | null | undefined
  readonly poster?: PosterSpec | null | undefined
}

/** Editable fields; `sizeBytes` or `touchContent` give the file new bytes. */
export interface ItemPatch {
  readonly name?: string | undefined
  readonly kind?: Kind | undefined
  readonly mimeType?: string | undefined
  readonly sizeBytes?: number | undefined
  readonly downloadId?: string | null | undefined
  readonly locked?: boolean | undefined
  readonly expiresAt?: number | undefined
  readonly media?: Media | null | undefined
  readonly poster?: PosterSpec | null | undefined
  readonly touchContent?: boolean | undefined
}

export type DeleteOutcome = "deleted" | "not_found" | "resource_locked"

export class TreeError extends Error {
  readonly reason: "not_found" | "not_a_folder" | "cycle" | "locked"
  constructor(reason: TreeError["reason"], message: string) {
    super(message)
    this.reason = reason
  }
}

const DAY_MICROS = 86_400_000_000
/** Items expire from the account after this long unless told otherwise. */
export const DEFAULT_ITEM_LIFETIME_MICROS = 365 * DAY_MICROS

export const FOLDER_MIME = "inode/directory"

/** Code-unit order, the order of "by id". */
export const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** A new item as `spec` describes it, created at `now` (its seq is set when the tree records it). */
export const newItem = (spec: NewItem, id: string, now: number): Item => ({
  id,
  type: spec.type,
  parentId: spec.parentId,
  downloadId: spec.downloadId ?? null,
  name: spec.name,
  kind: spec.type === "folder" ? "folder" : spec.kind,
  mimeType: spec.type === "folder" ? FOLDER_MIME : spec.mimeType,
  sizeBytes: spec.type === "folder" ? 0 : (spec.sizeBytes ?? 0),
  locked: spec.locked ?? false,
  expiresAt: spec.expiresAt ?? now + DEFAULT_ITEM_LIFETIME_MICROS,
  createdAt: now,
  updatedAt: now,
  media: spec.type === "folder" ? null : (spec.media ?? null),
  poster: spec.type === "folder" ? null : (spec.poster ?? null),
  contentVersion: 1,
  contentModifiedAt: now,
  seq: 0
})
