/**
 * When the durability committer flushes (fdatasync + journal save): a pure decision over
 * the bytes written since the last flush and the bytes still to arrive.
 *
 * Far from the end of the file it is the batch: `batch` unsynced bytes. Within the last
 * batch it is "at least what is still to come" (never less than NEAR_END_FLOOR of a batch),
 * so the flushes halve what is left to flush as the last bytes arrive: the last batch is
 * made durable while it downloads, and the finalize's fsync finds less than a floor's worth
 * (when the disk keeps up) instead of up to a whole batch. That costs about three
 * fdatasyncs more per file, all overlapped with the download.
 */

/** The smallest near-end flush, as a fraction of the batch. */
export const NEAR_END_FLOOR = 1 / 8

/** The unsynced bytes that make a flush due when `toArrive` bytes of the file are still to come. */
export const commitThreshold = (toArrive: number, batch: number): number =>
  Math.min(batch, Math.max(Math.ceil(batch * NEAR_END_FLOOR), toArrive))

/** True when the committer should flush now. */
export const commitDue = (unsynced: number, toArrive: number, batch: number): boolean =>
  unsynced > 0 && unsynced >= commitThreshold(toArrive, batch)
