/**
 * What a hook is given for an event (pure): its environment (the facts as `DLSYNC_*`
 * variables, over dlsync's own environment without its `DLSYNC_*` variables, which may hold
 * secrets) and its stdin (the changed paths as a JSON array for `pass_complete`, else empty).
 * Paths given to hooks are absolute.
 */
import * as NodePath from "node:path"
import type { MirrorEvent } from "../events/MirrorEvent.ts"

export interface HookInput {
  readonly env: Readonly<Record<string, string>>
  readonly stdin: string
}

export const hookInput = (
  event: MirrorEvent,
  root: string,
  parentEnv: Readonly<Record<string, string | undefined>>
): HookInput => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value !== undefined && !name.startsWith("DLSYNC_")) env[name] = value
  }
  const facts = (f: Record<string, string | number | null>) => {
    for (const [name, value] of Object.entries(f)) env[`DLSYNC_${name}`] = value === null ? "" : String(value)
  }
  facts({ EVENT: event._tag, ROOT: root })
  let stdin = ""
  switch (event._tag) {
    case "file_complete":
    case "file_failed":
      facts({
        PATH: event.absolutePath,
        RELATIVE_PATH: event.path,
        FILE_ID: event.fileId,
        SIZE: event.size,
        KIND: event.kind,
        CATEGORY: event.category
      })
      if (event._tag === "file_failed") facts({ REASON: event.reason })
      break
    case "download_complete":
      facts({ DOWNLOAD_ID: event.downloadId, COUNT: event.paths.length })
      stdin = JSON.stringify(event.paths.map((p) => NodePath.join(root, p)))
      break
    case "pass_complete":
      facts({ COUNT: event.changed.length, DOWNLOADED: event.downloaded, FAILED: event.failed })
      stdin = JSON.stringify(event.changed.map((p) => NodePath.join(root, p)))
      break
    case "deletion_held":
      facts({ COUNT: event.count, MIRRORED: event.mirrored, LIMIT: event.limit, REASON: event.reason })
      stdin = JSON.stringify(event.paths.map((p) => NodePath.join(root, p)))
      break
    case "release_complete":
      facts({
        RELEASE_ID: event.id,
        NAME: event.name,
        CATEGORY: event.category,
        VIA: event.via,
        PATH: event.absolutePath,
        RELATIVE_PATH: event.path,
        SIZE: event.size,
        COUNT: event.files
      })
      break
    case "release_failed":
      facts({ RELEASE_ID: event.id, NAME: event.name, CATEGORY: event.category, VIA: event.via, REASON: event.reason })
      break
    case "local_moved":
    case "local_removed":
      break
  }
  return { env, stdin }
}
