/**
 * The intake queue: the one way releases come in (the qBittorrent and SABnzbd surfaces, the
 * blackhole folders, `dlsync add`) and the one place the apps read their state from.
 *
 *   surface ─► add(source, category) ─► record in the store (identity) ─► POST /downloads
 *          ◄─ list(filter) ◄─ the record + the service's state + the local mirror's state
 *
 * Invariants (kept by the implementation, relied on by every surface):
 * - `add` stores the intake before anything is sent and returns the existing item for an
 *   identity already present (never two downloads for one release); a removed identity
 *   stays removed (tombstone) unless added again explicitly.
 * - An item is `completed` only when every file of its service download is verified on local
 *   disk at `contentPath`; before that no temporary file is visible under `savePath`.
 * - Nothing here fails a surface's request for a service outage: the item waits (`queued`,
 *   with its reason and the time it expects to go).
 */
import { Context, type Effect, Schema } from "effect"
import type { IntakeId } from "../domain/IntakeId.ts"

/** What a surface hands in. Bytes are the file exactly as received (the identity is computed from them). */
export type IntakeSource =
  | { readonly _tag: "Magnet"; readonly uri: string }
  | { readonly _tag: "TorrentFile"; readonly fileName: string; readonly content: Uint8Array }
  | { readonly _tag: "NzbFile"; readonly fileName: string; readonly content: Uint8Array }
  | { readonly _tag: "Url"; readonly url: string }

export interface AddOptions {
  /** The category (a folder under the mirror root); empty = none. */
  readonly category: string
  /** Added stopped: recorded, not sent until resumed. */
  readonly paused?: boolean
  /** Where it came from, for the log and `status` (e.g. "qbittorrent", "blackhole", "cli"). */
  readonly via: string
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
  readonly state: IntakeState
  /** Why it is queued, paused or failed, in one line (the service's reason where it gave one). */
  readonly reason: string | null
  /** 0..1: the service's progress while downloading, then the local transfer's. */
  readonly progress: number
  /** Total bytes when known (0 until the service knows). */
  readonly size: number
  /** Bytes not yet on local disk. */
  readonly remaining: number
  /** Seconds to completion, or null when unknown. */
  readonly etaSeconds: number | null
  /** Milliseconds since the epoch. */
  readonly addedAt: number
  readonly completedAt: number | null
  /** Expected start (ms since the epoch) when queued behind a cap or a rate limit. */
  readonly expectedStartAt: number | null
  /** Absolute local folder the category maps to (`<root>/<category>`), before `path_map`. */
  readonly savePath: string
  /** Absolute local path of the release (a file for a single-file release, else its folder); never equal to savePath. */
  readonly contentPath: string
  /** The service's download id once known. */
  readonly downloadId: string | null
  /**
   * The release's files with the bytes on local disk; names relative to savePath with "/"
   * (qBittorrent's convention: a multi-file release's names start with its folder, the last
   * segment of contentPath; a single file's name is that file's).
   */
  readonly files: ReadonlyArray<{ readonly name: string; readonly size: number; readonly localBytes: number }>
}

export interface ListFilter {
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
    /** Records the release (or finds it) and returns its item at once; sending happens behind. */
    add(source: IntakeSource, options: AddOptions): Effect.Effect<IntakeItem, IntakeError>
    list(filter?: ListFilter): Effect.Effect<ReadonlyArray<IntakeItem>>
    /** Removes the items (tombstoned); with deleteFiles also the remote files and the local copy dlsync wrote. */
    remove(ids: ReadonlyArray<IntakeId>, deleteFiles: boolean): Effect.Effect<void, IntakeError>
    pause(ids: ReadonlyArray<IntakeId>): Effect.Effect<void>
    resume(ids: ReadonlyArray<IntakeId>): Effect.Effect<void>
    setCategory(ids: ReadonlyArray<IntakeId>, category: string): Effect.Effect<void, IntakeError>
    /** Categories: the configured ones plus those created through a surface. */
    categories: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly savePath: string }>>
    createCategory(name: string): Effect.Effect<void, IntakeError>
    removeCategories(names: ReadonlyArray<string>): Effect.Effect<void>
  }
>()("dlsync/intake/Intake") {}
