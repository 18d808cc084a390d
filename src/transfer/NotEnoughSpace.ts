import { Schema } from "effect"
import { formatBytes } from "./progressFormat.ts"

/**
 * A download would leave less than `transfers.min_free_space` free, and the run does not
 * wait for room (`run --once`): temporary (exit 75), once space is freed it goes on.
 */
export class NotEnoughSpace extends Schema.TaggedError<NotEnoughSpace>()("NotEnoughSpace", {
  /** A folder on the file system that is short of space. */
  path: Schema.String,
  free: Schema.Number,
  /** What the file still needs plus `transfers.min_free_space`. */
  needed: Schema.Number,
  minFree: Schema.Number
}) {
  override get message(): string {
    return (
      `not enough free space for the downloads in ${this.path}: ${formatBytes(this.needed)} needed ` +
      `(the file and transfers.min_free_space = ${formatBytes(this.minFree)}), ${formatBytes(this.free)} free; ` +
      `free some space or lower transfers.min_free_space`
    )
  }
}
