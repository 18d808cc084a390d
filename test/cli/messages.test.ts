/**
 * What a new user reads, through the real CLI: a bad command line in one line (exit 64),
 * configuration problems in line order with the fix, `config check` printing TOML and what
 * the configuration does unexpectedly, and the daemon saying that it stopped.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { parse as parseToml } from "smol-toml"
import { CLI, runCli, type Sandbox, sandbox } from "../integration/harness.ts"
import { startThenSigterm } from "../service/sigterm.ts"

let box: Sandbox | undefined
const dirs: Array<string> = []
afterEach(async () => {
  await box?.close()
  box = undefined
  for (const dir of dirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
})

/** A home with `config.toml` holding `text` (the mirror root `root/` beside it exists). */
const home = (text: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-messages-"))
  dirs.push(dir)
  Fs.mkdirSync(Path.join(dir, "root"))
  const file = Path.join(dir, "config.toml")
  Fs.writeFileSync(file, text.replaceAll("ROOT", Path.join(dir, "root")))
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("DLSYNC_")) env[k] = v
  return { dir, file, env: { ...env, HOME: dir, XDG_CONFIG_HOME: Path.join(dir, "xdg"), NO_COLOR: "1" } }
}

const BASE = `[service]
base_url = "http://127.0.0.1:9/api/v1"
api_key = "k"

[mirror]
root = "ROOT"
`

/** stderr's lines that are not log lines (JSON objects). */
const said = (stderr: string) =>
  stderr
    .trim()
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("{"))

describe("a bad command line", { timeout: 60_000 }, () => {
  for (const [args, expected] of [
    [["run", "--wizard"], /^dlsync: Unrecognized flag: --wizard in command dlsync run \(`dlsync run --help` lists/],
    [["run", "--onse"], /^dlsync: Unrecognized flag: --onse .*; did you mean --once\? \(`dlsync run --help`/],
    [["stauts"], /^dlsync: Unknown subcommand "stauts" for "dlsync"; did you mean status\? \(`dlsync --help`/]
  ] as const) {
    it(`dlsync ${args.join(" ")}: one line, exit 64, no help text`, async () => {
      const { env } = home(BASE)
      const result = await runCli(args, env, 30_000)
      assert.strictEqual(result.code, 64, result.stderr)
      assert.deepStrictEqual(said(result.stderr).length, 1, result.stderr)
      assert.match(said(result.stderr)[0]!, expected)
      assert.strictEqual(result.stdout, "", "the help is for --help")
    })
  }
})

describe("configuration problems", { timeout: 60_000 }, () => {
  it("in the file's line order, each with its fix, exit 78", async () => {
    const { file, env } = home(`${BASE}\n[sync]\npol_interval = "30s"\n\n[transfers]\nconcurrency = "3"\n`)
    const result = await runCli(["config", "check", "--config", file], env, 30_000)
    assert.strictEqual(result.code, 78, result.stderr)
    assert.deepStrictEqual(said(result.stderr), [
      `dlsync: configuration error: ${file}:9: sync.pol_interval: unknown key; did you mean poll_interval?`,
      `dlsync: configuration error: ${file}:12: transfers.concurrency: Expected number, got "3" (write 3 without quotes)`
    ])
  })

  it("a --config that does not exist, and a password_file that cannot be read: said once, in words", async () => {
    const { dir, file, env } = home(`${BASE}\n[qbittorrent]\nusername = "arr"\npassword_file = "nope"\n`)
    const missing = await runCli(["config", "check", "--config", Path.join(dir, "other.toml")], env, 30_000)
    assert.deepStrictEqual(said(missing.stderr), [
      `dlsync: configuration error: --config: ${Path.join(dir, "other.toml")} does not exist`
    ])
    const unreadable = await runCli(["config", "check", "--config", file], env, 30_000)
    assert.deepStrictEqual(said(unreadable.stderr), [
      `dlsync: configuration error: ${file}:10: qbittorrent.password_file: cannot read ${Path.join(dir, "nope")}: no such file`
    ])
  })
})

describe("config check", { timeout: 60_000 }, () => {
  it("prints the effective settings as TOML: [[hooks]] as an array of tables, unset keys as comments", async () => {
    const { file, env } = home(
      `${BASE}\n[[hooks]]\nevent = "file_complete"\ncommand = ["/bin/true", "x"]\n\n[[notify]]\nurl = "https://hooks.example.com/x"\n`
    )
    const result = await runCli(["config", "check", "--config", file], env, 30_000)
    assert.strictEqual(result.code, 0, result.stderr)
    const printed = parseToml(result.stdout)
    assert.deepStrictEqual(printed.hooks, [{ event: "file_complete", command: ["/bin/true", "x"], timeout: "30s" }])
    assert.deepStrictEqual(printed.notify, [
      {
        url: "<redacted: webhook (hooks.example.com)>",
        events: ["file_failed", "release_failed", "deletion_held"],
        level: "info"
      }
    ])
    assert.include(result.stdout, "\n# client_id: not set\n")
    assert.notInclude(result.stdout, "null")
  })

  it("says what the configuration does that its author may not expect, as comments", async () => {
    const { dir, file, env } = home(
      `${BASE}\n[webhooks]\nlisten = "127.0.0.1:7661"\nsecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"\n`
    )
    const elsewhere = Path.join(dir, "elsewhere")
    Fs.mkdirSync(elsewhere)
    const result = await runCli(
      ["config", "check", "--config", file],
      { ...env, DLSYNC_MIRROR_ROOT: elsewhere },
      30_000
    )
    assert.strictEqual(result.code, 0, result.stderr)
    const notes = result.stdout.split("\n").filter((line) => line.startsWith("# note: "))
    assert.deepStrictEqual(notes, [
      `# note: the environment overrides the configuration file: DLSYNC_MIRROR_ROOT replaces mirror.root of ${file}:6 (unset the variable, or remove the key from the file)`,
      "# note: webhooks.listen is set without webhooks.public_url: the downloads dlsync creates carry no webhook_url, so the service delivers nothing to the receiver; set webhooks.public_url to the public https address that leads to it"
    ])
  })
})

describe("the daemon", { timeout: 120_000 }, () => {
  it("warns at start about what config check notes, and its last line says it stopped", async () => {
    box = await sandbox()
    const { file } = home(BASE)
    const stopped = await startThenSigterm({
      command: process.execPath,
      args: [CLI, "run", "--config", file],
      cwd: box.dir,
      env: box.env(),
      stateDir: box.stateDir
    })
    assert.deepStrictEqual(stopped.exit, { code: 0, signal: null }, stopped.output)
    const lines = stopped.output.trim().split("\n")
    assert.isTrue(
      lines.some((line) => line.includes("DLSYNC_MIRROR_ROOT replaces mirror.root") && line.includes('"level":"warn"')),
      stopped.output
    )
    assert.include(lines.at(-1), '"message":"stopped"', stopped.output)
  })
})
