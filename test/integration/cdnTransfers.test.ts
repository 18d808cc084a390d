/**
 * `dlsync run --once` fetching from the emulator's CDN over plain HTTP and over https (the
 * committed test certificate, trusted through NODE_EXTRA_CA_CERTS as a user trusts a
 * private CA; the API then speaks https too, as the real service's does): the same byte
 * path, the same faults, every byte checked.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import {
  CDN_SCHEMES,
  contentMismatches,
  expectedTree,
  type Sandbox,
  sandbox,
  seedSmallLibrary,
  snapshot
} from "./harness.ts"

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe.each(CDN_SCHEMES)("run --once from a CDN over %s", { timeout: 120_000 }, (scheme) => {
  it("mirrors every byte through a reset and a truncated body mid-file", async () => {
    box = await sandbox("empty", { cdn: scheme, api: scheme })
    const ids = seedSmallLibrary(box.emu)
    assert.match(box.emu.cdnUrl, new RegExp(`^${scheme}://`))
    assert.match(box.emu.baseUrl, new RegExp(`^${scheme}://`))
    const alpha = ids.get("Movies/alpha.mkv") ?? assert.fail("no alpha")
    const e01 = ids.get("TV/Season 1/e01.mkv") ?? assert.fail("no e01")
    box.emu.control.addFault({ kind: "reset", path: `/dl/${alpha}/**`, count: 1, afterBytes: 16_384 })
    box.emu.control.addFault({ kind: "truncate", path: `/dl/${e01}/**`, count: 1, afterBytes: 10_000 })

    const result = await box.run(["run", "--once"])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.deepStrictEqual(snapshot(box.root), expectedTree(box.emu))
    assert.deepStrictEqual(contentMismatches(box.emu, box.root), [])
    const cdn = box.emu.control.requests({ origin: "cdn" })
    for (const id of [alpha, e01]) {
      const asked = cdn.filter((r) => r.path.startsWith(`/dl/${id}/`))
      assert.strictEqual(asked.length, 2, `${id}: the cut request, then the rest (${JSON.stringify(asked)})`)
    }
  })
})

describe("run --once from a CDN whose certificate is not trusted", { timeout: 120_000 }, () => {
  it("exits 1 with one line per file naming the host and what to do, not retried", async () => {
    box = await sandbox("empty", { cdn: "https" })
    const b = box
    b.emu.control.addFile({ name: "a.bin", parentId: null, sizeBytes: 5_000 })
    b.emu.control.addFile({ name: "b.bin", parentId: null, sizeBytes: 7_000 })

    const result = await b.run(["run", "--once"], { env: { NODE_EXTRA_CA_CERTS: "" } })
    assert.strictEqual(result.code, 1, result.stderr)
    const host = new URL(b.emu.cdnOrigin).host
    for (const name of ["a.bin", "b.bin"]) {
      const lines = result.stderr.split("\n").filter((l) => l.startsWith(`failed: ${name}:`))
      assert.deepStrictEqual(lines, [
        `failed: ${name}: CDN ${host}: TLS certificate refused (DEPTH_ZERO_SELF_SIGNED_CERT): self-signed certificate; ` +
          "if you trust its issuer, name its CA certificate in NODE_EXTRA_CA_CERTS, or set NODE_OPTIONS=--use-system-ca to trust the system's CA store"
      ])
      assert.isFalse(Fs.existsSync(Path.join(b.root, name)))
    }
    assert.notInclude(result.stderr, "retrying", "a certificate is not retried")
    assert.notInclude(result.stderr, "    at ", "no stack trace")
    assert.strictEqual(b.emu.control.requests({ origin: "cdn" }).length, 0, "no request got through the handshake")
  })

  it("an API whose certificate is not trusted: exit 75, one line naming the host and what to do", async () => {
    box = await sandbox("empty", { cdn: "https", api: "https" })
    box.emu.control.addFile({ name: "a.bin", parentId: null, sizeBytes: 5_000 })

    const result = await box.run(["run", "--once"], { env: { NODE_EXTRA_CA_CERTS: "" } })
    assert.strictEqual(result.code, 75, result.stderr)
    const host = new URL(box.emu.baseUrl).host
    assert.deepStrictEqual(
      result.stderr.split("\n").filter((l) => l.startsWith("dlsync:")),
      [
        `dlsync: cannot reach the service at ${host}: its TLS certificate was refused (DEPTH_ZERO_SELF_SIGNED_CERT); ` +
          "if you trust its issuer, name its CA certificate in NODE_EXTRA_CA_CERTS, or set NODE_OPTIONS=--use-system-ca to trust the system's CA store; else check service.base_url"
      ]
    )
    assert.notInclude(result.stderr, "    at ", "no stack trace")
    assert.isFalse(Fs.existsSync(Path.join(box.root, "a.bin")))
    assert.strictEqual(box.emu.control.requests({ origin: "api" }).length, 0, "no request got through the handshake")
  })
})
