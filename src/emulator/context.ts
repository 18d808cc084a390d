/**
 * What the emulator is started with and what every area's routes get. It sits below the
 * server and the areas so that they import it rather than each other: the server builds one
 * `EmulatorContext` and hands it to each area's route list.
 */
import type { CdnDownloads } from "./cdnDownloads.ts"
import type { ContentSource } from "./content.ts"
import type { Faults } from "./faults.ts"
import type { RequestLog } from "./requestLog.ts"
import type { AccessTokens, EmulatorState } from "./state.ts"
import type { ZipMethod } from "./zip.ts"

export interface EmulatorOptions {
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string
  /** API port (default 0: any free port). */
  readonly port?: number
  /** CDN port (default 0). */
  readonly cdnPort?: number
  /** Makes download links point at another server (e.g. nginx serving the same bytes). */
  readonly cdnBase?: string
  /**
   * Serves the CDN origin over https with this key and certificate (PEM), as real CDNs do;
   * the client must trust the certificate (tests: test/fixtures/tls, NODE_EXTRA_CA_CERTS).
   */
  readonly cdnTls?: { readonly key: string; readonly cert: string }
  /** Serves the API origin over https alike (the real service's API is https). */
  readonly apiTls?: { readonly key: string; readonly cert: string }
  /** Caps every CDN file response at this many bytes per second (a per-connection cap). */
  readonly cdnRatePerConnection?: number
  /** Serve `<dir>/<file id>` instead of generated content when such a file exists. */
  readonly contentDir?: string
  /** Enables the control API under /_control. */
  readonly control?: boolean
  /** Sample library to generate for the primary user (see library.ts). */
  readonly library?: string
  readonly linkTtlMs?: number
  readonly cursorTtlMs?: number
  /** Lifetime of OAuth access tokens (default 3600 s); tests shorten it to watch tokens expire. */
  readonly accessTokenLifetimeSeconds?: number
  /** Lets personal API keys read /files/changes (experiments only; the spec refuses them). */
  readonly allowApiKeyChanges?: boolean
}

/** What every area's routes get: state, collaborators and the (late-bound) public URLs. */
export interface EmulatorContext {
  readonly state: EmulatorState
  readonly tokens: AccessTokens
  readonly faults: Faults
  readonly requestLog: RequestLog
  readonly content: ContentSource
  readonly cdnDownloads: CdnDownloads
  /** How ZIP archives are written and where their links point (control API). */
  readonly zip: { method: ZipMethod; base: string | null }
  readonly options: EmulatorOptions
  readonly urls: EmulatorUrls
}

export interface EmulatorUrls {
  /** Host root of the API origin, no trailing slash. */
  auth: string
  /** `${auth}/api/v1`. */
  base: string
  /** Where links point: `cdnBase`, else the CDN origin. */
  cdn: string
  /** The emulator's own CDN origin (posters and ZIPs are always served there). */
  cdnOrigin: string
}
