/**
 * Which folders a media server must look at again after a batch of mirror events (pure):
 * the folder a file landed in, and the folder something left (moved away, trashed,
 * deleted), each once, as absolute local paths.
 *
 * A folder that gained a file is `Created`; one that lost something (it may also have
 * gained) is `Modified`: it still exists, only its contents changed.
 */
import * as NodePath from "node:path"
import type { MirrorEvent } from "../events/MirrorEvent.ts"

export type UpdateType = "Created" | "Modified"

export interface FolderUpdate {
  readonly folder: string
  readonly type: UpdateType
}

/** The events a media refresh acts on. */
export type RefreshEvent = Extract<MirrorEvent, { readonly _tag: "file_complete" | "local_moved" | "local_removed" }>

export const isRefreshEvent = (event: MirrorEvent): event is RefreshEvent =>
  event._tag === "file_complete" || event._tag === "local_moved" || event._tag === "local_removed"

/** One update per folder, in the order the folders first appear. */
export const refreshFolders = (root: string, events: ReadonlyArray<RefreshEvent>): ReadonlyArray<FolderUpdate> => {
  const folders = new Map<string, UpdateType>()
  const add = (relative: string, type: UpdateType) => {
    const folder = NodePath.dirname(NodePath.join(root, relative))
    if (folders.get(folder) !== "Modified") folders.set(folder, type)
  }
  for (const event of events) {
    switch (event._tag) {
      case "file_complete":
        add(event.path, "Created")
        break
      case "local_moved":
        add(event.from, "Modified")
        add(event.to, "Created")
        break
      case "local_removed":
        add(event.path, "Modified")
        break
    }
  }
  return [...folders].map(([folder, type]) => ({ folder, type }))
}
