/**
 * The outcome of one attempt that got no usable answer, as an `ApiError`: a transport
 * failure at one of its stages (wire), or the status an attempt was answered with.
 */

import { isCertificateVerdict } from "../net/certificateVerdict.ts"
import { ApiError, type ApiErrorReason, ClientValidation, Protocol, Transport } from "./ApiError.ts"
import type { WireFailure } from "./ApiTransport.ts"
import { errorCodes, provablyNeverSent } from "./neverSent.ts"

export const fromWireFailure = (
  failure: WireFailure,
  operation: string,
  limits: { readonly timeoutMs: number; readonly maxResponseBytes: number },
  requestId: string
): ApiError => {
  const reason: ApiErrorReason = (() => {
    switch (failure.stage) {
      case "invalid":
        return new ClientValidation({ field: "request", message: `cannot be sent: ${String(failure.cause)}` })
      case "connect": {
        const codes = errorCodes(failure.cause)
        const certificate = codes.find(isCertificateVerdict)
        return new Transport({
          message: `connection failed${codes.length > 0 ? ` (${codes.join(", ")})` : ""}`,
          neverSent: provablyNeverSent(failure.cause),
          timedOut: codes.some((c) => c.includes("TIMEOUT")),
          ...(certificate === undefined ? {} : { certificate })
        })
      }
      case "timeout":
        return new Transport({
          message: `no complete answer within ${limits.timeoutMs} ms`,
          neverSent: false,
          timedOut: true
        })
      case "too-large":
        return new Protocol({
          status: failure.status ?? 0,
          message: `response body exceeds ${limits.maxResponseBytes} bytes`,
          requestId: failure.headers["x-request-id"] ?? requestId
        })
      case "body":
        return new Transport({
          message: "the response could not be read to the end",
          neverSent: false,
          timedOut: false
        })
    }
  })()
  return new ApiError({ operation, reason })
}

/** The status an attempt was answered with; "network" without an answer; undefined if never sent. */
export const answeredStatus = (error: ApiError): number | "network" | undefined => {
  const reason = error.reason
  if (reason._tag === "ClientValidation") return undefined
  if (reason._tag === "Transport") return "network"
  return "status" in reason && reason.status !== undefined ? reason.status : "network"
}
