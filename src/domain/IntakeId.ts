/** The stable identity of an intake: `btih:<40 hex lowercase>` for torrents and magnets, `sha256:<hex>` otherwise. */
import { Schema } from "effect"

export const IntakeId = Schema.String.pipe(Schema.brand("IntakeId"))
export type IntakeId = typeof IntakeId.Type
