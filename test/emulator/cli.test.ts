import { spawn } from "node:child_process"
import { once } from "node:events"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { NodeServices } from "@effect/platform-node"
import { Effect, Schema } from "effect"
import { Command } from "effect/cli"
import { assert, describe, it } from "vitest"
import { emulatorCommand } from "../../src/cli/emulator.ts"
import { emulatorBanner, emulatorJson } from "../../src/commands/emulator.ts"
import { startEmulator } from "../../src/emulator/server.ts"
import { decode } from "./schemas.ts"

const runner = fileURLToPath(new URL("./fixtures/emulatorCli.ts", import.meta.url))

const Started = Schema.Struct({
  base_url: Schema.String,
  auth_url: Schema.String,
  cdn_url: Schema.String,
  api_key: Schema.String,
  client_id: Schema.String,
  access_token: Schema.String,
  refresh_token: Schema.String,
  control_url: Schema.optionalKey(Schema.String)
})

const start = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [runner, ...args], { stdio: ["ignore", "pipe", "pipe"] })
  const lines = createInterface({ input: child.stdout })
  const first = new Promise<string>((resolve, reject) => {
    lines.once("line", resolve)
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)))
  })
  return { child, first }
}

describe("dlsync emulator", () => {
  it("--json prints one JSON object on the first line, serves it, and stops on SIGTERM", async () => {
    const { child, first } = start(["--port", "0", "--json", "--control", "--library", "demo"])
    try {
      const info = decode(Started, JSON.parse(await first))
      assert.strictEqual(info.base_url, `${info.auth_url}/api/v1`)
      assert.strictEqual(info.control_url, `${info.auth_url}/_control`)
      assert.match(info.api_key, /^dls_/)
      assert.match(info.client_id, /^[0-9a-f-]{36}$/)
      const files = await fetch(`${info.base_url}/files/changes`, {
        headers: { Authorization: `Bearer ${info.access_token}` }
      })
      assert.strictEqual(files.status, 200)
      const account = await fetch(`${info.base_url}/account`, { headers: { Authorization: `Bearer ${info.api_key}` } })
      assert.strictEqual(account.status, 200)
      assert.strictEqual((await fetch(`${info.control_url}`)).status, 200)
      child.kill("SIGTERM")
      await once(child, "exit")
      const refused = await fetch(`${info.base_url}/account`).then(
        () => "answered",
        () => "refused"
      )
      assert.strictEqual(refused, "refused", "the servers are closed on SIGTERM")
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("prints the URLs, an API key and a client id for people, the control URL only when enabled", async () => {
    const plain = await startEmulator({ library: "empty" })
    const withControl = await startEmulator({ library: "empty", control: true })
    try {
      const text = emulatorBanner(plain)
      assert.include(text, `base_url   ${plain.baseUrl}`)
      assert.include(text, `auth_url   ${plain.authUrl}`)
      assert.include(text, `api_key    ${plain.apiKey}`)
      assert.include(text, `client_id  ${plain.clientId}`)
      assert.notInclude(text, "control")
      assert.include(emulatorBanner(withControl), `control    ${withControl.controlUrl}`)
      assert.notProperty(emulatorJson(plain), "control_url")
      assert.strictEqual(emulatorJson(withControl).control_url, withControl.controlUrl)
    } finally {
      await Promise.all([plain.close(), withControl.close()])
    }
  })

  it("refuses a malformed --library spec before starting anything", async () => {
    const error = await Command.runWith(emulatorCommand, { version: "test", renderErrors: false })([
      "--port",
      "0",
      "--library",
      "files=abc"
    ]).pipe(Effect.flip, Effect.provide(NodeServices.layer), Effect.runPromise)
    assert.strictEqual(error._tag, "ShowHelp")
    const messages = error._tag === "ShowHelp" ? error.errors.map((e) => e.message).join("\n") : ""
    assert.include(messages, "invalid library spec")
  })
})
