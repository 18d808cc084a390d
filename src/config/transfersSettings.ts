/**
 * The `[transfers]` section as the program uses it: every key's decoded value (the keys'
 * schemas are `sections.transfers` in fields.ts) and its default, declared once here. The
 * configuration fills it in (loadConfig.ts) and the transfer engine's options extend it
 * (TransferOptions.ts). config.example.toml documents each key and default.
 */
import type { sections } from "./fields.ts"

type TransfersFields = typeof sections.transfers

export type TransfersSettings = { readonly [K in keyof TransfersFields]: TransfersFields[K]["schema"]["Type"] }

const MiB = 1024 * 1024

export const TRANSFERS_DEFAULTS: TransfersSettings = {
  concurrency: 3,
  segments: 4,
  max_connections: 16,
  segment_threshold: 64 * MiB,
  bandwidth_limit: 0,
  bandwidth_schedule: [],
  min_free_space: 1024 * MiB,
  zip_min_files: 32,
  zip_median_below: 4 * MiB
}
