/**
 * The intake queue: the one way releases come in (the qBittorrent and SABnzbd surfaces, the
 * blackhole folders, `dlsync add`) and the one place every surface reads their state from.
 *
 *   surface ─► add(source, category) ─► record in the store (identity) ─► POST /downloads
 *          ◄─ list(filter) ◄─ releaseView(record, its files in the store, live transfers)
 *
 * Invariants (kept by the implementation, relied on by every surface):
 * - `add` stores the intake before anything is sent and returns the existing item for an
 *   identity already present (never two downloads for one release); a removed identity
 *   stays removed (tombstone) unless added again explicitly.
 * - A release owns exactly its files: the remote items whose `download_id` is its download.
 *   Its `contentPath` covers those and no other release's; removing it with its files deletes
 *   those (by id), never a folder that holds anything else.
 * - An item is `completed` only when every file of its service download is verified on local
 *   disk under `contentPath`; before that no temporary file is visible under `savePath`.
 *   Once complete, `contentPath` does not move until the release is removed.
 * - Each surface sees and acts on its own releases (`via`) and categories; `dlsync add`, the
 *   blackhole and the web page add releases no API surface lists (the web page and `status`
 *   show every one, and the web page, its owner's, acts on every one).
 * - Nothing here fails a surface's request for a service outage: the item waits (`queued`,
 *   with its reason and the time it expects to go).
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"
import type { OfferedItem } from "../store/intakeTables.ts"

/** What a surface hands in. Bytes are the file exactly as received (the identity is computed from them). */
export type IntakeSource =
  | { readonly _tag: "Magnet"; readonly uri: string }
  | { readonly _tag: "TorrentFile"; readonly fileName: string; readonly content: Uint8Array }
  | { readonly _tag: "NzbFile"; readonly fileName: string; readonly content: Uint8Array }
  | { readonly _tag: "Url"; readonly url: string }

/** Who adds and lists releases; each API surface sees only its own. */
export type IntakeSurface = "qbittorrent" | "sabnzbd" | "blackhole" | "cli" | "web"

export interface AddOptions {
  /** The category (a folder under the mirror root); empty = none. */
  readonly category: string
  /** Added stopped: recorded, not sent until resumed. */
  readonly paused?: boolean
  /** The surface it came through: the one that lists it (and the log, `status`). */
  readonly via: IntakeSurface
  /** The release name the app chose (SABnzbd's `nzbname`); default: the name read from the source. */
  readonly name?: string
}

/**
 * Where an item is in its life, as the apps need it:
 * queued (waiting in dlsync: a cap, a rate limit, a selection) · paused · downloading (the
 * service is fetching) · mirroring (the service has it; dlsync is copying it to disk) ·
 * completed (every byte verified locally) · failed (the service's failure, blocked, canceled,
 * expired, or a local failure that will not heal by waiting).
 */
export type IntakeState = "queued" | "paused" | "downloading" | "mirroring" | "completed" | "failed"

export interface IntakeItem {
  readonly id: IntakeId
  /** The release name (the torrent's or NZB's name, the magnet's dn, else the URL's last segment). */
  readonly name: string
  readonly category: string
  /** The surface that added it. */
  readonly via: string
  readonly state: IntakeState
  /** Why it is queued, paused or failed, in one line (the service's reason where it gave one). */
  readonly reason: string | null
  /**
   * 0..1 over both phases, never lower than an earlier reading in this process: the
   * service's download fills the first half, the mirror's copy the second; 1 only when
   * completed.
   */
  readonly progress: number
  /** Total bytes when known (0 until the service knows). */
  readonly size: number
  /** `size × (1 − progress)`, rounded: what is left of the whole, as the apps read it. */
  readonly remaining: number
  /** Bytes per second now: the service's while it downloads, the mirror's while it copies; 0 otherwise. */
  readonly rate: number
  /**
   * Seconds to completion, or null when unknown: while queued behind a cap or a rate limit,
   * until it goes; while the service downloads, until the service has it; while mirroring,
   * until every file is on disk at the current rate; 0 once completed.
   */
  readonly etaSeconds: number | null
  /** Milliseconds since the epoch. */
  readonly addedAt: number
  readonly completedAt: number | null
  /** Expected start (ms since the epoch) when queued behind a cap or a rate limit. */
  readonly expectedStartAt: number | null
  /**
   * Absolute local folder the release sits in, before `path_map`: the folder holding
   * `contentPath` (`<root>/<category>` unless the release has a folder of its own there).
   */
  readonly savePath: string
  /** Absolute local path of the release (a file for a single-file release, else its root folder); never equal to savePath. */
  readonly contentPath: string
  /** The service's download id once known. */
  readonly downloadId: string | null
  /** A selection stage no policy could answer, waiting for the user's choice (`choose`); null otherwise. */
  readonly selection: {
    readonly expiresAt: string | null
    readonly items: ReadonlyArray<OfferedItem>
  } | null
  /**
   * The release's files with the bytes on local disk; names relative to savePath with "/"
   * (qBittorrent's convention: a multi-file release's names start with its folder, the last
   * segment of contentPath; a single file's name is that file's).
   */
  readonly files: ReadonlyArray<{ readonly name: string; readonly size: number; readonly localBytes: number }>
}

export interface ListFilter {
  /** Only the releases this surface added; absent: every one (status, the web page). */
  readonly via?: IntakeSurface
  readonly category?: string
  readonly ids?: ReadonlyArray<IntakeId>
}

export class IntakeError extends Schema.TaggedError<IntakeError>()("IntakeError", {
  /** `invalid`: the source cannot be read (bad magnet, not a torrent, empty NZB); `unavailable`: the store cannot be written. */
  reason: Schema.Literals(["invalid", "unavailable"]),
  problem: Schema.String
}) {
  override get message(): string {
    return this.problem
  }
}

export class Intake extends Context.Service<
  Intake,
  {
    /**
     * Records the release (or finds it) and returns its item at once; sending happens
     * behind. A release another surface added is refused (`invalid`): no surface sees or
     * acts on another's.
     */
    add(source: IntakeSource, options: AddOptions): Effect.Effect<IntakeItem, IntakeError>
    list(filter?: ListFilter): Effect.Effect<ReadonlyArray<IntakeItem>>
    /** The source a live release was added with (the magnet, the .torrent's or NZB's bytes, the URL); none otherwise. */
    source(id: IntakeId): Effect.Effect<Option.Option<IntakeSource>>
    /**
     * Removes the items (tombstoned); with deleteFiles also the release's files on the
     * service (by id: its own files, and its own folder only when nothing else is in it),
     * after which the mirror trashes the local copies it wrote.
     */
    remove(ids: ReadonlyArray<IntakeId>, deleteFiles: boolean): Effect.Effect<void, IntakeError>
    pause(ids: ReadonlyArray<IntakeId>): Effect.Effect<void>
    resume(ids: ReadonlyArray<IntakeId>): Effect.Effect<void>
    /** A release not yet sent goes to the new category's folder; one sent keeps its files where they are. */
    setCategory(ids: ReadonlyArray<IntakeId>, category: string): Effect.Effect<void, IntakeError>
    /**
     * Answers a selection stage that waits for a choice (`IntakeItem.selection`) with one of
     * its selectable items; the runner sends it. `invalid` when the release waits for no
     * choice or the item is not a selectable one of its stage.
     */
    choose(id: IntakeId, itemId: string): Effect.Effect<void, IntakeError>
    /** A surface's categories: the configured ones plus those created through it. */
    categories(via: IntakeSurface): Effect.Effect<ReadonlyArray<{ readonly name: string; readonly savePath: string }>>
    createCategory(via: IntakeSurface, name: string): Effect.Effect<void, IntakeError>
    /** Removes categories created through `via` (configured ones stay). */
    removeCategories(via: IntakeSurface, names: ReadonlyArray<string>): Effect.Effect<void>
  }
>()("dlsync/intake/Intake") {}
