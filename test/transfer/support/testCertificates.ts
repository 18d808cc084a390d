/**
 * Certificates made at test time with the `openssl` command line: a test CA and server
 * certificates it signs, so a test can serve real TLS on 127.0.0.1 and decide which CA the
 * client trusts. Nothing is kept on disk: each step works in a temp folder it removes.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TlsIdentity } from "./rangeServer.ts"

export interface TestCa {
  /** The CA certificate (PEM), for the client to trust. */
  readonly cert: string
  /** A server certificate signed by this CA for `subjectAltName` (e.g. "IP:127.0.0.1"), with its key. */
  readonly issue: (subjectAltName: string) => TlsIdentity
}

/** A new CA (P-256, valid two days) named `name`. */
export const makeTestCa = (name: string): TestCa => {
  const ca = inTempDir((at) => {
    openssl(
      ["req", "-x509", ...NEW_KEY, "-keyout", at("ca.key"), "-out", at("ca.crt"), "-days", "2"].concat(
        ["-subj", `/CN=${name}`],
        ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]
      )
    )
    return { key: Fs.readFileSync(at("ca.key"), "utf8"), cert: Fs.readFileSync(at("ca.crt"), "utf8") }
  })
  let serial = 1
  return {
    cert: ca.cert,
    issue: (subjectAltName) =>
      inTempDir((at) => {
        Fs.writeFileSync(at("ca.key"), ca.key, { mode: 0o600 })
        Fs.writeFileSync(at("ca.crt"), ca.cert)
        Fs.writeFileSync(
          at("ext.cnf"),
          `subjectAltName=${subjectAltName}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`
        )
        openssl([
          "req",
          "-new",
          ...NEW_KEY,
          "-subj",
          "/CN=dlsync test server",
          "-keyout",
          at("leaf.key"),
          "-out",
          at("leaf.csr")
        ])
        openssl(
          ["x509", "-req", "-in", at("leaf.csr"), "-CA", at("ca.crt"), "-CAkey", at("ca.key")].concat([
            "-set_serial",
            String(serial++),
            "-days",
            "2",
            "-extfile",
            at("ext.cnf"),
            "-out",
            at("leaf.crt")
          ])
        )
        return { key: Fs.readFileSync(at("leaf.key"), "utf8"), cert: Fs.readFileSync(at("leaf.crt"), "utf8") }
      })
  }
}

// ---------------------------------------------------------------------------------------

const NEW_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

const openssl = (args: ReadonlyArray<string>): void => {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] })
}

/** Runs `f` with a function naming files in a fresh temp folder, removed afterwards. */
const inTempDir = <A>(f: (at: (file: string) => string) => A): A => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-tls-"))
  try {
    return f((file) => Path.join(dir, file))
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}
