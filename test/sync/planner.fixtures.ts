import type { PlanConfig } from "../../src/sync/planner.ts"
import { ALL } from "./fixtures.ts"

/** The defaults: trash remote deletions, respect local ones, the default big-delete rule. */
export const CONFIG: PlanConfig = { ...ALL, onRemoteDelete: "trash", onLocalDelete: "respect", maxDelete: null }
