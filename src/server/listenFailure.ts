/**
 * Why a local HTTP server of dlsync could not listen, in words a user acts on: the system
 * error code (EADDRINUSE, EACCES, …) when there is one, and what it means.
 */
import { Predicate } from "effect"

export const listenFailure = (cause: unknown): { readonly code: string | undefined; readonly why: string } => {
  const code = Predicate.hasProperty(cause, "code") && Predicate.isString(cause.code) ? cause.code : undefined
  const why =
    code === undefined ? (cause instanceof Error ? cause.message : String(cause)) : (LISTEN_ERRORS[code] ?? code)
  return { code, why }
}

const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: "the address is already in use",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "the address does not belong to this host",
  ENOTFOUND: "the host name does not resolve",
  EAFNOSUPPORT: "this host does not support that address family"
}
