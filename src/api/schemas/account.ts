/** The account with its plan, credits and effective limits (GET /account). */
import { Schema } from "effect"
import { SafeInt, Timestamp } from "./common.ts"

export const Plan = Schema.Struct({ name: Schema.String, expires_at: Timestamp })
export type Plan = typeof Plan.Type

/** A daily allowance: count or bytes, what is left, and when it resets. */
export const DailyAllowance = Schema.Struct({
  limit: SafeInt,
  remaining: SafeInt,
  resets_at: Timestamp
})
export type DailyAllowance = typeof DailyAllowance.Type

/** Effective caps, each null when no such cap applies; read them, never hard-code them. */
export const Limits = Schema.Struct({
  daily_downloads: Schema.NullOr(DailyAllowance),
  daily_download_bytes: Schema.NullOr(DailyAllowance),
  max_file_size_bytes: Schema.NullOr(SafeInt),
  concurrent_downloads: Schema.NullOr(SafeInt),
  concurrent_torrents: Schema.NullOr(SafeInt)
})
export type Limits = typeof Limits.Type

export const Account = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  email_verified: Schema.Boolean,
  created_at: Timestamp,
  /** Null for free-tier accounts and expiring-credit accounts without active plan access. */
  plan: Schema.NullOr(Plan),
  credits: Schema.Struct({ remaining: SafeInt }),
  limits: Limits
})
export type Account = typeof Account.Type
