/**
 * The committed test certificates (test/fixtures/tls, made once with openssl: the command is
 * in its README) and the trust a test gives them: Node's default CA list plus these for the
 * test file (what NODE_EXTRA_CA_CERTS does for a process), so the engine runs as in
 * production and checks them as it checks any CDN.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Tls from "node:tls"
import { afterAll, beforeAll } from "@effect/vitest"
import type { TlsIdentity } from "./rangeServer.ts"

const FIXTURES = Path.resolve(import.meta.dirname, "../../fixtures/tls")

const identity = (name: string): TlsIdentity & { readonly certPath: string } => ({
  key: Fs.readFileSync(Path.join(FIXTURES, `${name}.key`), "utf8"),
  cert: Fs.readFileSync(Path.join(FIXTURES, `${name}.crt`), "utf8"),
  certPath: Path.join(FIXTURES, `${name}.crt`)
})

/** Made out to 127.0.0.1 and localhost. */
export const localhostTls = identity("localhost")
/** Made out to cdn.example.invalid only. */
export const otherHostTls = identity("other-host")

/** Trusts `identities` (default: both) in this test file, as NODE_EXTRA_CA_CERTS would. */
export const trustTestCertificates = (identities: ReadonlyArray<TlsIdentity> = [localhostTls, otherHostTls]) => {
  const defaults = Tls.getCACertificates("default")
  beforeAll(() => Tls.setDefaultCACertificates([...defaults, ...identities.map((i) => i.cert)]))
  afterAll(() => Tls.setDefaultCACertificates(defaults))
}

/** The schemes every transfer fault test runs over. */
export const SCHEMES = ["http", "https"] as const
export type Scheme = (typeof SCHEMES)[number]

/** The server identity for `scheme` (none for plain http). */
export const tlsFor = (scheme: Scheme): TlsIdentity | undefined => (scheme === "https" ? localhostTls : undefined)
