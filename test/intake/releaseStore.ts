/**
 * A real store (SQLite in a temp folder) holding releases' files as the feed and the mirror
 * would leave them: remote items with their download_id, local entries of what landed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Layer } from "effect"
import { FileId } from "../../src/domain/FileId.ts"
import { type RemoteItem, upsert } from "../../src/domain/RemoteItem.ts"
import { MirrorEvents } from "../../src/events/MirrorEvents.ts"
import { IntakeLive } from "../../src/intake/IntakeLive.ts"
import { IntakeSettings } from "../../src/intake/IntakeSettings.ts"
import { IntakeTables } from "../../src/store/intakeTables.ts"
import { Store } from "../../src/store/Store.ts"
import { storeLayer, tempDir } from "../store/helpers.ts"

export const folder = (id: string, parentId: string | null, name: string): RemoteItem => ({
  id: FileId.make(id),
  parentId: parentId === null ? null : FileId.make(parentId),
  name,
  type: "folder",
  kind: "folder",
  size: 0,
  mimeType: "",
  locked: false,
  updatedAt: "2026-01-01T00:00:00Z",
  createdAt: "2026-01-01T00:00:00Z",
  expiresAt: null
})

export const remoteFile = (
  id: string,
  parentId: string | null,
  name: string,
  size: number,
  downloadId?: string
): RemoteItem => ({
  ...folder(id, parentId, name),
  type: "file",
  kind: "video",
  size,
  mimeType: "video/x-matroska",
  ...(downloadId === undefined ? {} : { downloadId })
})

/** The items as one feed page that completes a listing, recorded as caught up from `caughtUpFrom` (ISO). */
export const seedRemote = (items: ReadonlyArray<RemoteItem>, caughtUpFrom = "2100-01-01T00:00:00Z") =>
  Effect.gen(function* () {
    const store = yield* Store
    yield* store.feed.applyPage({ changes: items.map(upsert), nextCursor: null, hasMore: false })
    yield* store.feed.recordPoll(caughtUpFrom)
  })

/** A file landed at `path` under `root` as the mirror lands one: on disk, then a synced entry. */
export const landed = (root: string, path: string, item: RemoteItem) =>
  Effect.gen(function* () {
    const store = yield* Store
    const absolute = Path.join(root, path)
    Fs.mkdirSync(Path.dirname(absolute), { recursive: true })
    Fs.writeFileSync(absolute, Buffer.alloc(item.size, 1))
    const stat = Fs.lstatSync(absolute, { bigint: true })
    yield* store.local.put({
      path,
      remoteId: item.id,
      type: "file",
      written: { size: Number(stat.size), mtimeNs: stat.mtimeNs, ino: stat.ino },
      remote: { size: item.size, updatedAt: item.updatedAt, name: item.name, parentId: item.parentId },
      state: "synced",
      attempts: 0,
      lastError: null
    })
  })

/** The intake over a fresh store in a temp folder, with `root` as the mirror root and `categories` configured. */
export const intakeOverStore = (
  root: string,
  categories: IntakeSettings["Service"]["categories"] = { tv: { selection: "largest", cached_only: false } }
) =>
  IntakeLive.pipe(
    Layer.provideMerge(IntakeTables.layer),
    Layer.provideMerge(storeLayer(Path.join(tempDir(), "state"))),
    Layer.provideMerge(IntakeSettings.layer({ root, categories })),
    Layer.provideMerge(MirrorEvents.layer)
  )
