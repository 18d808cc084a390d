/**
 * The `[transfers]` section as the program uses it: every key's decoded value, its schema
 * and default in `sections.transfers` of fields.ts. The transfer engine's options extend it
 * (TransferOptions.ts). config.example.toml documents each key and default.
 */
import { Schema } from "effect"
import { ConfigSchema, type DecodedConfig } from "./fields.ts"

export type TransfersSettings = DecodedConfig["transfers"]

/** Every key's default: the section decoded from nothing. */
export const TRANSFERS_DEFAULTS: TransfersSettings = Schema.decodeUnknownSync(ConfigSchema.fields.transfers)({})
