/**
 * A call to Sonarr or Radarr that did not give what was asked, in one line naming the app,
 * what went wrong and what to do; never the API key.
 * `unreachable`: no answer, or the app is starting or broken (5xx): try again later.
 * `refused`: the API key is wrong, or the URL is not the app's API: the configuration.
 * `notFound`: the thing asked for is gone (a queue item removed meanwhile).
 * `protocol`: an answer the app's API does not document.
 */
import { Schema } from "effect"

export class ArrError extends Schema.TaggedError<ArrError>()("ArrError", {
  reason: Schema.Literals(["unreachable", "refused", "notFound", "protocol"]),
  problem: Schema.String
}) {
  override get message(): string {
    return this.problem
  }
}
