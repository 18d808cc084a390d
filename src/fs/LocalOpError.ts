import { Effect, Schema } from "effect"
import { describeError } from "./errno.ts"

/** A local operation was refused or failed; the path is left as it was. */
export class LocalOpError extends Schema.TaggedError<LocalOpError>()("LocalOpError", {
  path: Schema.String,
  reason: Schema.Literals(["outside_root", "symlink", "not_a_directory", "changed", "exists", "missing", "io"]),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.detail}`
  }
}

export const opError = (path: string, reason: LocalOpError["reason"], detail: string) =>
  new LocalOpError({ path, reason, detail })

/** Runs a synchronous operation on `rel`: a refusal or an I/O error is a LocalOpError naming it. */
export const runOp = <A>(rel: string, f: () => A): Effect.Effect<A, LocalOpError> =>
  Effect.try({ try: f, catch: (e) => (e instanceof LocalOpError ? e : opError(rel, "io", describeError(e))) })
