/**
 * The seam through which `/api/status` gets the `status --json` document.
 *
 * The engine provides it (the same function `dlsync status --json` prints), so the
 * endpoint and the command never disagree. `document` is a JSON-serializable value read
 * fresh on each call, from the store, so it tells the truth after a restart; a failure
 * to read is a defect and the endpoint answers 500.
 */
import { Context, type Effect } from "effect"

export class StatusSource extends Context.Service<
  StatusSource,
  {
    readonly document: Effect.Effect<unknown>
  }
>()("dlsync/server/StatusSource") {}
