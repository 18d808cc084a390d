/**
 * The mirror engine's vocabulary, remote side: a remote item (one file or folder of the
 * account, as the feed last reported it) and a remote change (one record of a feed page).
 *
 * These are dlsync's own types, independent of the API client's wire schemas: the feed
 * consumer maps each API record to a `RemoteChange`. Unknown kinds pass through as strings
 * (the spec's rule: clients accept unknown enum values).
 */
import { Schema } from "effect"
import { FileId } from "./FileId.ts"

export const ItemType = Schema.Literals(["file", "folder"])
export type ItemType = typeof ItemType.Type

export const RemoteItem = Schema.Struct({
  id: FileId.pipe(Schema.check(Schema.isMinLength(1))),
  parentId: Schema.NullOr(FileId),
  name: Schema.String,
  type: ItemType,
  kind: Schema.String,
  size: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0))),
  mimeType: Schema.String,
  locked: Schema.Boolean,
  updatedAt: Schema.String,
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  /** The service download the file came from; absent when none (or not reported yet). */
  downloadId: Schema.optionalKey(Schema.String),
  /** The poster's content-addressed URL; absent when none (or posters are off: not asked for). */
  posterUrl: Schema.optionalKey(Schema.String)
})
export type RemoteItem = typeof RemoteItem.Type

/** One record of a feed page: an item as it now is, or the news that it is gone. */
export type RemoteChange =
  | { readonly _tag: "Upsert"; readonly item: RemoteItem }
  | { readonly _tag: "Delete"; readonly id: FileId }

export const upsert = (item: RemoteItem): RemoteChange => ({ _tag: "Upsert", item })
export const remove = (id: FileId): RemoteChange => ({ _tag: "Delete", id })

/**
 * The feed's semantics as a pure fold, the reference the Store's SQL must agree with:
 * records apply in order, the last record for an id wins, a delete of an unknown id is
 * harmless. Repeating a record, or re-applying a whole page, leaves the result unchanged.
 */
export const applyChanges = (
  items: ReadonlyMap<FileId, RemoteItem>,
  changes: Iterable<RemoteChange>
): Map<FileId, RemoteItem> => {
  const next = new Map(items)
  for (const change of changes) {
    if (change._tag === "Upsert") next.set(change.item.id, change.item)
    else next.delete(change.id)
  }
  return next
}
