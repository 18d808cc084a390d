/**
 * The sign-in errors. Each means "a person must act" and maps to exit 77 (EX_NOPERM) in
 * the CLI; none carries a token or a device code.
 */
import { Schema } from "effect"
import { ApiError, Unauthorized } from "../api/ApiError.ts"

/**
 * No usable credential: never signed in, signed out, the stored tokens belong to another
 * service, or the service refused the refresh token (`invalid_grant`: revoked, or rotated
 * by a refresh whose answer was lost). The mirror stays untouched; `dlsync login` fixes it.
 */
export class LoginRequired extends Schema.TaggedError<LoginRequired>()("LoginRequired", {
  reason: Schema.Literals(["not_signed_in", "refresh_rejected", "other_service"]),
  detail: Schema.String
}) {
  override get message(): string {
    return `login required: ${this.detail}; run \`dlsync login\``
  }
}

/** The device flow stopped: the user refused (`access_denied`) or the code ran out (`expired_token`). */
export class DeviceLoginFailed extends Schema.TaggedError<DeviceLoginFailed>()("DeviceLoginFailed", {
  reason: Schema.Literals(["access_denied", "expired_token", "rejected"]),
  detail: Schema.String
}) {
  override get message(): string {
    if (this.reason === "access_denied") {
      return "sign-in was refused on the verification page; run `dlsync login` to try again"
    }
    if (this.reason === "expired_token") {
      return "the sign-in code expired before it was approved; run `dlsync login` to get a new one"
    }
    return `the service refused the sign-in: ${this.detail}`
  }
}

/** The token file or its lock cannot be read or written (permissions, disk full, corrupt). */
export class TokenStoreError extends Schema.TaggedError<TokenStoreError>()("TokenStoreError", {
  path: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.problem}`
  }
}

/** The `code` an ApiError carries when it stands for LoginRequired (see `asApiError`). */
export const LOGIN_REQUIRED_CODE = "login_required"

/**
 * LoginRequired as the API client's error: the Credentials seam fails only with ApiError,
 * so it travels as a 401 Unauthorized reason with code `login_required`.
 */
export const loginRequiredAsApiError = (e: LoginRequired): ApiError =>
  new ApiError({
    operation: "sign in",
    reason: new Unauthorized({ status: 401, code: LOGIN_REQUIRED_CODE, message: e.message })
  })

/** True for an ApiError that stands for LoginRequired: the daemon reports "login required", `run --once` exits 77. */
export const isLoginRequired = (e: ApiError): boolean =>
  e.reason._tag === "Unauthorized" && e.reason.code === LOGIN_REQUIRED_CODE
