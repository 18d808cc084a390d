/**
 * The transfer engine's settings. Fields named like config keys (`transfers.<key>`) are
 * wired from the configuration by the caller; sizes and rates are bytes (per second).
 * The camelCase fields are engineering constants, exposed so tests can shrink them.
 */
import { TRANSFERS_DEFAULTS, type TransfersSettings } from "../config/transfersSettings.ts"
import { currentBootId } from "./writtenMark.ts"

/**
 * The `[transfers]` settings (concurrency: files at once; segments: the parallel Range
 * requests a file of at least segment_threshold bytes steps to from its first one, when more
 * bring more (1: one request, no steps; decideConnections.ts); max_connections: requests
 * in flight to one host over all files, which adaptive files grow into; bandwidth_limit and bandwidth_schedule;
 * min_free_space: a file is not started, and transfers pause, when less would remain free),
 * plus the engineering constants below.
 */
export interface TransferOptions extends TransfersSettings {
  /**
   * Durability batch: fsync + journal commit after this many written bytes (within a file's
   * last batch, in halving pieces as it arrives: commitPolicy.ts)…
   */
  readonly durabilityBytes: number
  /** …or this long after the first unsynced byte, whichever comes first. */
  readonly durabilityMs: number
  /** A response that sends no byte for this long is cut (stalled body). */
  readonly idleTimeoutMs: number
  /** Failed attempts (transient faults) per file and pass before it is parked. */
  readonly maxAttempts: number
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
  /** Fresh links asked for after CDN refusals per file and pass before it is parked. */
  readonly maxLinkRefreshes: number
  /** Restarts from zero (changed validator, Range ignored…) per file and pass before it is parked. */
  readonly maxRestarts: number
  readonly maxRedirects: number
  /**
   * The longest wait for the service's rate limit (a 429 on the link request) a file
   * makes; a longer one ends the download as `RateLimited` (run --once). null waits as
   * long as the service asks (the daemon).
   */
  readonly maxRateLimitWaitMs: number | null
  /** A link is not used when it expires within this margin. */
  readonly linkMarginMs: number
  /**
   * The read buffers, each written with one positional write (two per request in memory).
   * 512 KiB: against 1 MiB, 7 MB less peak RSS over 2 GiB https (8 connections), with wall
   * and CPU alike within the noise (4 alternated pairs).
   */
  readonly bufferSize: number
  /** A segment is split for work stealing only when this many bytes are left. */
  readonly minSplit: number
  /**
   * Adaptive connections (decideConnections.ts): after a change of count the file's rate is
   * left to settle this long, then measured over `connectionWindowMs`.
   */
  readonly connectionRampMs: number
  readonly connectionWindowMs: number
  /** How often a transfer paused for disk space looks again. */
  readonly spaceRecheckMs: number
  /** A file short of disk space waits for room (the daemon); false fails with NotEnoughSpace (`run --once`). */
  readonly waitForSpace: boolean
  readonly userAgent: string
  /**
   * The kernel's boot id: written marks (writtenMark.ts) from another boot are ignored; null
   * turns them off. Tests change it to stand for a reboot.
   */
  readonly bootId: string | null
}

const KiB = 1024
const MiB = 1024 * KiB

export const defaultTransferOptions: TransferOptions = {
  ...TRANSFERS_DEFAULTS,
  // A killed process loses nothing it wrote (the written mark), so a batch is what a power
  // loss costs per file. 64 MiB against 16 MiB: segmented 2 GiB +14–38 % (bench/run.ts).
  durabilityBytes: 64 * MiB,
  durabilityMs: 2_000,
  idleTimeoutMs: 30_000,
  maxAttempts: 5,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  maxLinkRefreshes: 3,
  maxRestarts: 3,
  maxRedirects: 5,
  maxRateLimitWaitMs: null,
  linkMarginMs: 30_000,
  bufferSize: 512 * KiB,
  minSplit: 8 * MiB,
  connectionRampMs: 200,
  connectionWindowMs: 400,
  spaceRecheckMs: 30_000,
  waitForSpace: true,
  userAgent: "dlsync",
  bootId: currentBootId()
}

export const transferOptions = (overrides: Partial<TransferOptions> = {}): TransferOptions => ({
  ...defaultTransferOptions,
  ...overrides
})
