/**
 * The line a user reads when a command stops on a request to the service: what failed in
 * plain words, which host, and what to check. A failure to reach the service names the
 * host and the system's reason (refused, unknown host, timed out) instead of transport
 * jargon; a refused credential names the setting that holds it (or `dlsync login`); other
 * failures keep the request and the service's own answer.
 */
import type { ApiError } from "../api/ApiError.ts"
import { certificateAdvice } from "../net/certificateVerdict.ts"

/** What the configuration says about the service: its address, and whether an API key is set. */
export interface ServiceSettings {
  readonly baseUrl: string
  readonly apiKey: boolean
}

export const apiFailureMessage = (error: ApiError, service: ServiceSettings | undefined): string => {
  const reason = error.reason
  if (reason._tag === "Unauthorized" || reason._tag === "Forbidden") {
    const [credential, fix] =
      service?.apiKey === true
        ? ["API key", "check service.api_key (or api_key_file, DLSYNC_SERVICE_API_KEY)"]
        : ["sign-in", "run `dlsync login`"]
    const answer = `HTTP ${reason.status} to ${error.operation}: ${reason.message}`
    return reason._tag === "Unauthorized"
      ? `the service refused the ${credential} (${answer}); ${fix}`
      : `the service does not allow this with the ${credential} (${answer}); ${fix}`
  }
  const baseUrl = service?.baseUrl
  if (reason._tag !== "Transport") return error.message
  const host = hostOf(baseUrl)
  const where = host === undefined ? "the service" : `the service at ${host}`
  if (reason.certificate !== undefined) {
    const advice = certificateAdvice(reason.certificate)
    return `cannot reach ${where}: its TLS certificate was refused (${reason.certificate}); ${advice === undefined ? "" : `${advice}; else `}check service.base_url`
  }
  const why = reason.timedOut ? "no answer in time" : (reasonOf(reason.message) ?? reason.message)
  return `cannot reach ${where} (${why}); check service.base_url, that the host is up and that this machine can reach it (network, DNS, proxy), then try again`
}

const hostOf = (url: string | undefined): string | undefined => {
  if (url === undefined || !URL.canParse(url)) return undefined
  return new URL(url).host
}

/** The system error code in a transport message, in words. */
const reasonOf = (message: string): string | undefined => {
  for (const [code, words] of Object.entries(CODES)) if (message.includes(code)) return words
  return undefined
}

const CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused: nothing listens on that port",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed for now",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNRESET: "connection reset",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out"
}
