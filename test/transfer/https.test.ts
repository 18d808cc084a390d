/**
 * What only TLS can get wrong: certificates the engine must refuse. The byte path itself
 * (downloads, resumes, faults) runs over https in TransferEngine.test.ts, parametrized with
 * plain HTTP. The engine trusts what Node trusts by default; this file adds only the
 * certificate made out to another host (as NODE_EXTRA_CA_CERTS would), so the localhost
 * one is an untrusted self-signed certificate here.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeHarness, withServer } from "./support/harness.ts"
import { localhostTls, otherHostTls, trustTestCertificates } from "./support/testTls.ts"

const KiB = 1024

trustTestCertificates([otherHostTls])

describe("TransferEngine over https: refused certificates", () => {
  it.effect("an untrusted self-signed certificate parks the file at once, naming the host and the fix", () =>
    withServer(
      64 * KiB,
      (server, content) =>
        Effect.gen(function* () {
          const h = makeHarness({ link: () => server.link("a"), options: { maxAttempts: 5 } })
          const r = yield* h.download(h.request("a", content.length))
          assert.strictEqual(r._tag, "Parked")
          const reason = r._tag === "Parked" ? r.reason : ""
          assert.include(reason, `CDN 127.0.0.1:${server.port}: TLS certificate refused (DEPTH_ZERO_SELF_SIGNED_CERT)`)
          assert.include(reason, "self-signed certificate")
          assert.include(reason, "NODE_EXTRA_CA_CERTS")
          assert.notInclude(reason, "try running Node.js", "Node's advice is not for dlsync's users")
          assert.strictEqual(
            r._tag === "Parked" ? r.attempts : 0,
            1,
            "parked at once: a retry cannot fix a certificate"
          )
          assert.strictEqual(server.log.length, 0, "no request got through")
          assert.strictEqual(server.connections, 1, "one handshake, not retried")
          assert.isFalse(Fs.existsSync(Path.join(h.root, "media/a.bin")))
        }),
      localhostTls
    )
  )

  it.effect("a trusted certificate made out to another host name is refused (no request sent)", () =>
    withServer(
      64 * KiB,
      (server, content) =>
        Effect.gen(function* () {
          const h = makeHarness({ link: () => server.link("a") })
          const r = yield* h.download(h.request("a", content.length))
          assert.strictEqual(r._tag, "Parked")
          const reason = r._tag === "Parked" ? r.reason : ""
          assert.include(reason, "TLS certificate refused (ERR_TLS_CERT_ALTNAME_INVALID)")
          assert.include(reason, "127.0.0.1")
          assert.notInclude(reason, "NODE_EXTRA_CA_CERTS", "trusting more would not help")
          assert.strictEqual(
            r._tag === "Parked" ? r.attempts : 0,
            1,
            "parked at once: a retry cannot fix a certificate"
          )
          assert.strictEqual(server.log.length, 0, "no request got through")
        }),
      otherHostTls
    )
  )

  it.effect("an https link to a plain-HTTP port is a clear fault, not retried", () =>
    withServer(64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a").replace(/^http:/, "https:") })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.include(r._tag === "Parked" ? r.reason : "", "no TLS session")
        assert.strictEqual(r._tag === "Parked" ? r.attempts : 0, 1)
      })
    )
  )
})
