/**
 * The https path of the transfer engine (undici) against a real TLS server on 127.0.0.1,
 * with certificates made at test time. The engine trusts what Node trusts by default, so
 * the test adds its CA to Node's default CA list for this test file (as NODE_EXTRA_CA_CERTS
 * would for a process) and leaves the engine as it runs in production.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Tls from "node:tls"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { partialPathFor } from "../../src/transfer/TransferEngine.ts"
import { completed, makeHarness, withServer } from "./support/harness.ts"
import type { RangeServer, TlsIdentity } from "./support/rangeServer.ts"
import { makeTestCa } from "./support/testCertificates.ts"

const KiB = 1024

const trusted = makeTestCa("dlsync trusted test CA")
const untrusted = makeTestCa("dlsync untrusted test CA")
const loopback = trusted.issue("IP:127.0.0.1")

const defaultCas = Tls.getCACertificates("default")
beforeAll(() => Tls.setDefaultCACertificates([...defaultCas, trusted.cert]))
afterAll(() => Tls.setDefaultCACertificates(defaultCas))

/** An https server with file "a", its certificate from `identity`. */
const withHttpsServer = <A, E>(
  identity: TlsIdentity,
  size: number,
  f: (server: RangeServer, content: Buffer) => Effect.Effect<A, E>
) => withServer(size, f, identity)

const assertMirrored = (root: string, content: Buffer) => {
  const got = Fs.readFileSync(Path.join(root, "media/a.bin"))
  assert.strictEqual(got.length, content.length)
  assert.isTrue(got.equals(content), "final file differs from the remote content")
  assert.isFalse(Fs.existsSync(Path.join(root, partialPathFor("a"))), "partial file left behind")
}

describe("TransferEngine over https (a real TLS server, undici)", () => {
  it.effect("downloads a whole file in one request", () =>
    withHttpsServer(loopback, 100 * KiB + 7, (server, content) =>
      Effect.gen(function* () {
        assert.match(server.link("a"), /^https:/)
        const h = makeHarness({ link: () => server.link("a") })
        completed(yield* h.download(h.request("a", content.length)))
        assertMirrored(h.root, content)
        assert.strictEqual(server.log.length, 1)
        assert.strictEqual(server.bytesSent("a"), content.length)
        assert.strictEqual(h.records.size, 0)
      })
    )
  )

  it.effect("resumes a parked file with a ranged If-Range request from its durable bytes", () =>
    withHttpsServer(loopback, 512 * KiB, (server, content) =>
      Effect.gen(function* () {
        // The first response ends cleanly (TLS close) short of its Content-Length.
        server.faults.truncateAfter = 200 * KiB
        server.faults.truncateTimes = 1
        const options = { maxAttempts: 1, segment_threshold: 1e9 }
        const first = makeHarness({ link: () => server.link("a"), options })
        assert.strictEqual((yield* first.download(first.request("a", content.length)))._tag, "Parked")
        const durable = first.records.get("a")?.segments[0]?.durable ?? 0
        assert.isAbove(durable, 0, "progress was made durable before parking")

        // A new engine (as after a restart) continues from the journal.
        const second = makeHarness({ link: () => server.link("a"), root: first.root, records: first.records, options })
        completed(yield* second.download(second.request("a", content.length)))
        assertMirrored(first.root, content)
        const resumed = server.log[server.log.length - 1]
        assert.strictEqual(resumed?.headers.range, `bytes=${durable}-${content.length - 1}`)
        assert.strictEqual(resumed?.headers["if-range"], '"v1"')
        assert.strictEqual(resumed?.status, 206)
      })
    )
  )

  it.effect("downloads a large file as parallel ranges, every byte fetched once", () =>
    withHttpsServer(loopback, 1024 * KiB + 3, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a"), options: { segments: 4 } })
        const r = yield* h.download(h.request("a", content.length))
        completed(r)
        assertMirrored(h.root, content)
        const ranges = server.log.map((l) => l.headers.range)
        assert.isAtLeast(ranges.length, 4)
        assert.include(ranges, "bytes=0-262143")
        assert.strictEqual(r._tag === "Completed" ? r.fetched : 0, content.length)
      })
    )
  )

  it.effect("refuses a certificate from a CA it does not trust: the file is parked with the reason", () =>
    withHttpsServer(untrusted.issue("IP:127.0.0.1"), 64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a") })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.match(
          r._tag === "Parked" ? r.reason : "",
          /TLS certificate is refused \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/
        )
        assert.strictEqual(r._tag === "Parked" ? r.attempts : 0, 1, "parked at once: a retry cannot fix a certificate")
        assert.strictEqual(server.log.length, 0, "no request got through")
        assert.isFalse(Fs.existsSync(Path.join(h.root, "media/a.bin")))
      })
    )
  )

  it.effect("refuses a trusted CA's certificate made out to another host", () =>
    withHttpsServer(trusted.issue("DNS:cdn.example.invalid"), 64 * KiB, (server, content) =>
      Effect.gen(function* () {
        const h = makeHarness({ link: () => server.link("a") })
        const r = yield* h.download(h.request("a", content.length))
        assert.strictEqual(r._tag, "Parked")
        assert.match(r._tag === "Parked" ? r.reason : "", /TLS certificate is refused \(ERR_TLS_CERT_ALTNAME_INVALID\)/)
        assert.strictEqual(r._tag === "Parked" ? r.attempts : 0, 1, "parked at once: a retry cannot fix a certificate")
        assert.strictEqual(server.log.length, 0, "no request got through")
      })
    )
  )
})
