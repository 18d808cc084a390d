/**
 * Instant sync: the daemon with `[webhooks]` configured and a poll interval of ten minutes
 * mirrors a completed download within a second or two, woken by the emulator's real signed
 * delivery to its receiver; the feed poll that follows is what finds the file.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { freePort, type Sandbox, sandbox, waitUntil } from "./harness.ts"

/** Far beyond the test: only a wake can explain a quick landing. */
const POLL_INTERVAL = "10m"

/**
 * From the download's completion to the file in place: a delivery, one poll and a small
 * download take well under a second here; the bound leaves a loaded CI machine room and is
 * still a hundredth of the poll interval.
 */
const PROMPTLY_MS = 5_000

let box: Sandbox | undefined
afterEach(async () => {
  await box?.close()
  box = undefined
})

describe("daemon: webhooks", { timeout: 60_000 }, () => {
  it.each([
    ["OAuth: the change feed", false],
    ["a personal API key: listing mode", true]
  ])("%s: a completed download lands within seconds of its webhook, long before the next poll", async (_, apiKey) => {
    box = await sandbox()
    const b = box
    const control = (path: string, init: RequestInit = {}) =>
      fetch(`${b.emu.authUrl}/_control${path}`, { ...init, headers: { "content-type": "application/json" } })
    // The spec wants public https; the emulator delivers to loopback http when told to.
    assert.strictEqual(
      (
        await control("/webhooks/settings", {
          method: "POST",
          body: JSON.stringify({ allow_loopback_http: true, min_interval_ms: 10 })
        })
      ).status,
      204
    )
    const secretReply = await control(`/webhooks/secret?credential=apiKey:${b.emu.state.primaryUser.id}`)
    const { data: secretData } = (await secretReply.json()) as { data: { secret: string } }
    const secret = secretData.secret

    const port = await freePort()
    const daemon = b.spawn(["run"], {
      env: {
        DLSYNC_SYNC_POLL_INTERVAL: POLL_INTERVAL,
        DLSYNC_WEBHOOKS_LISTEN: `127.0.0.1:${port}`,
        DLSYNC_WEBHOOKS_SECRET: secret
      },
      deadlineMs: 50_000,
      apiKey
    })
    const log = () => daemon.output().stderr
    await waitUntil(() => log().includes("pass: "), 30_000, `the first pass\n${log()}`)
    assert.include(log(), `webhook receiver listening on http://127.0.0.1:${port}`)

    const created = await fetch(`${b.emu.baseUrl}/downloads`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.emu.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: "https://cdn.example.com/files/Holiday.mp4",
        webhook_url: `http://127.0.0.1:${port}/`
      })
    })
    assert.strictEqual(created.status, 201)
    const { data: download } = (await created.json()) as { data: { download: { id: string } } }
    const id = download.download.id
    const completedAt = Date.now()
    assert.strictEqual((await control(`/downloads/${id}/complete`, { method: "POST" })).status, 204)

    const landed = Path.join(b.root, "Holiday.mp4")
    await waitUntil(() => Fs.existsSync(landed), 20_000, `the downloaded file\n${log()}`)
    assert.isBelow(Date.now() - completedAt, PROMPTLY_MS, "woken by the webhook, not the ten-minute poll")
    assert.strictEqual(
      Fs.statSync(landed).size,
      [...b.emu.state.primaryUser.tree.values()].find((item) => item.name === "Holiday.mp4")?.sizeBytes
    )
    const attempts = (await (await control("/webhooks/attempts")).json()) as { data: Array<{ outcome: unknown }> }
    assert.deepStrictEqual(
      attempts.data.map((a) => a.outcome),
      [200],
      "the delivery was acknowledged"
    )
    assert.match(log(), /webhook download\.completed \([^)]+\): polling the account/)

    daemon.child.kill("SIGTERM")
    const exit = await daemon.exit
    assert.strictEqual(exit.code, 0, exit.stderr)
    assert.notInclude(exit.stderr, secret.slice("whsec_".length), "the secret never reaches the log")
  })

  it("a webhooks.listen port in use: one line naming it, exit 78", async () => {
    box = await sandbox()
    const b = box
    const port = await freePort()
    const { createServer } = await import("node:net")
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve))
    try {
      const result = await b.run(["run"], {
        env: {
          DLSYNC_WEBHOOKS_LISTEN: `127.0.0.1:${port}`,
          DLSYNC_WEBHOOKS_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        }
      })
      assert.strictEqual(result.code, 78, result.stderr)
      assert.match(
        result.stderr.trim().split("\n").at(-1) ?? "",
        new RegExp(
          `^dlsync: cannot listen on 127\\.0\\.0\\.1:${port} \\(webhooks\\.listen\\): the address is already in use; choose another address or set it to "off" \\(port ${port} is held by \\S+ \\(pid ${process.pid}\\)\\)$`
        )
      )
      assert.notInclude(result.stderr, "    at ", "no stack trace")
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()))
    }
  })
})
