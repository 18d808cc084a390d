/**
 * The engine's own failures, each mapped to one exit code in main.ts.
 */
import { Schema } from "effect"

/** `dlsync restore PATH` named nothing that was deleted locally (exit 64). */
export class NothingToRestore extends Schema.TaggedError<NothingToRestore>()("NothingToRestore", {
  path: Schema.String
}) {
  override get message(): string {
    return `nothing deleted locally at or below ${this.path} (see \`dlsync status\`)`
  }
}

/** `run --once` finished, but some items could not be mirrored (exit 1); each was listed. */
export class ItemsFailed extends Schema.TaggedError<ItemsFailed>()("ItemsFailed", {
  count: Schema.Int
}) {
  override get message(): string {
    return `${this.count} item(s) could not be mirrored (listed above; see \`dlsync status\`)`
  }
}

/** A combination of flags or arguments that makes no sense (exit 64). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}
