/**
 * Every expected start-up failure of every command, run through the real CLI: one line on
 * stderr naming the problem and what to do (log lines aside), no stack trace, and the
 * documented exit code (src/cli/exitCodes.ts, README "Exit codes").
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { seedTokens } from "../auth/support/fixtures.ts"
import { type CliResult, runCli, type Sandbox, sandbox } from "../integration/harness.ts"

let box: Sandbox | undefined
const dirs: Array<string> = []
const servers: Array<Net.Server> = []
afterEach(async () => {
  await box?.close()
  box = undefined
  for (const dir of dirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r))
})

const tempDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-startup-"))
  dirs.push(dir)
  return dir
}

/** An environment with no DLSYNC_ variable and no configuration in the usual places. */
const bareEnv = (home: string, extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("DLSYNC_")) env[k] = v
  return { ...env, HOME: home, XDG_CONFIG_HOME: Path.join(home, "xdg"), NO_COLOR: "1", ...extra }
}

/** A port that something else holds for the length of the test. */
const busyPort = async (): Promise<number> => {
  const server = Net.createServer()
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** A port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = Net.createServer()
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const address = server.address()
  await new Promise((r) => server.close(r))
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** The one line a failure prints (log lines, JSON objects, aside); no stack trace. */
const oneLine = (result: CliResult, code: number): string => {
  assert.strictEqual(result.code, code, result.stderr)
  assert.notMatch(result.stderr, /^\s+at /m, "no stack trace")
  const lines = result.stderr
    .trim()
    .split("\n")
    .filter((l) => !l.startsWith("{"))
  assert.strictEqual(lines.length, 1, result.stderr)
  assert.match(lines[0]!, /^dlsync: /)
  return lines[0]!
}

describe("no configuration at all", { timeout: 120_000 }, () => {
  for (const args of [
    ["run", "--once"],
    ["run"],
    ["status"],
    ["config", "check"],
    ["login"],
    ["logout"],
    ["restore", "x"]
  ]) {
    it(`dlsync ${args.join(" ")}: says where it looked, exit 78`, async () => {
      const home = tempDir()
      const line = oneLine(await runCli(args, bareEnv(home), 20_000), 78)
      assert.include(line, "no configuration file found")
      assert.include(line, Path.join(home, "xdg", "dlsync", "config.toml"))
      assert.include(line, "/etc/dlsync/config.toml")
    })
  }
})

describe("a broken configuration", { timeout: 60_000 }, () => {
  it("an API key given as a list: named, never shown, exit 78", async () => {
    const dir = tempDir()
    const file = Path.join(dir, "c.toml")
    Fs.writeFileSync(
      file,
      `[service]\nbase_url = "http://127.0.0.1:9/api/v1"\napi_key = ["dls_do_not_print"]\n[mirror]\nroot = "${dir}"\n`
    )
    for (const args of [["run", "--once"], ["status"], ["config", "check"]]) {
      const result = await runCli([...args, "--config", file], bareEnv(dir), 20_000)
      const line = oneLine(result, 78)
      assert.include(line, `${file}:3: service.api_key:`)
      assert.notInclude(result.stderr + result.stdout, "dls_do_not_print")
    }
  })
})

describe("config check checks what run needs", { timeout: 60_000 }, () => {
  it("a missing root, exit 78", async () => {
    box = await sandbox()
    const missing = Path.join(box.dir, "not-mounted")
    const line = oneLine(await box.run(["config", "check"], { root: missing, apiKey: true }), 78)
    assert.include(line, `mirror.root: ${missing} does not exist`)
  })

  it("no credential at all, exit 78", async () => {
    box = await sandbox()
    const env = box.env({}, { apiKey: true })
    delete env.DLSYNC_SERVICE_API_KEY
    const line = oneLine(await runCli(["config", "check"], env, 20_000), 78)
    assert.include(line, "no credential: run `dlsync login`")
  })

  it("everything in place: 0, and --online reaches the service", async () => {
    box = await sandbox()
    const offline = await box.run(["config", "check"], { apiKey: true })
    assert.strictEqual(offline.code, 0, offline.stderr)
    assert.include(offline.stdout, "credential: API key")
    const online = await box.run(["config", "check", "--online"], { apiKey: true })
    assert.strictEqual(online.code, 0, online.stderr)
    assert.include(online.stdout, "# service reached: signed in as")
  })

  it("--online with the service unreachable: 75, naming the host", async () => {
    box = await sandbox()
    const port = await closedPort()
    const result = await box.run(["config", "check", "--online"], {
      apiKey: true,
      env: { DLSYNC_SERVICE_BASE_URL: `http://127.0.0.1:${port}/api/v1` }
    })
    assert.include(oneLine(result, 75), `cannot reach the service at 127.0.0.1:${port} (connection refused`)
  })
})

describe("run", { timeout: 120_000 }, () => {
  it("the service unreachable: 75, naming the host and what to check", async () => {
    box = await sandbox()
    const port = await closedPort()
    const result = await box.run(["run", "--once"], {
      apiKey: true,
      env: { DLSYNC_SERVICE_BASE_URL: `http://127.0.0.1:${port}/api/v1` }
    })
    const line = oneLine(result, 75)
    assert.include(line, `cannot reach the service at 127.0.0.1:${port}`)
    assert.include(line, "check service.base_url")
    assert.notInclude(line, "Transport")
  })

  it("with OAuth, the service unreachable: the same one line, and no app-state warnings before it", async () => {
    box = await sandbox()
    const port = await closedPort()
    const authUrl = `http://127.0.0.1:${port}`
    await Effect.runPromise(seedTokens(box.emu, box.stateDir, { authUrl }))
    const result = await box.run(["run", "--once"], {
      env: { DLSYNC_SERVICE_BASE_URL: `${authUrl}/api/v1`, DLSYNC_SERVICE_AUTH_URL: authUrl }
    })
    assert.include(oneLine(result, 75), `cannot reach the service at 127.0.0.1:${port}`)
    const warnings = result.stderr.split("\n").filter((l) => /"level":"(WARN|ERROR)"/i.test(l))
    assert.deepStrictEqual(warnings, [])
  })

  it("a wrong API key: 77, one line saying which setting holds it", async () => {
    box = await sandbox()
    const result = await box.run(["run", "--once"], { apiKey: true, env: { DLSYNC_SERVICE_API_KEY: "not-the-key" } })
    const line = oneLine(result, 77)
    assert.match(line, /^dlsync: the service refused the API key \(HTTP 401 to GET \/files\b/)
    assert.include(line, "check service.api_key (or api_key_file, DLSYNC_SERVICE_API_KEY)")
    assert.notInclude(result.stderr, "not-the-key")
  })

  it("neither signed in nor an API key: 77, one line saying both ways once", async () => {
    box = await sandbox()
    const { DLSYNC_SERVICE_API_KEY: _key, ...env } = box.env()
    const line = oneLine(await runCli(["run", "--once"], env, 30_000), 77)
    assert.strictEqual(
      line,
      "dlsync: login required: not signed in and no API key set (service.api_key, service.api_key_file or DLSYNC_SERVICE_API_KEY); run `dlsync login`"
    )
  })

  it("a missing root: 78", async () => {
    box = await sandbox()
    const result = await box.run(["run", "--once"], { root: Path.join(box.dir, "gone"), apiKey: true })
    assert.include(oneLine(result, 78), Path.join(box.dir, "gone"))
  })

  it("the health endpoint's port in use: 78, naming server.listen and the program holding the port", async () => {
    box = await sandbox()
    const port = await busyPort()
    const result = await box.run(["run"], { apiKey: true, env: { DLSYNC_SERVER_LISTEN: `127.0.0.1:${port}` } })
    const line = oneLine(result, 78)
    assert.include(line, `cannot listen on 127.0.0.1:${port} (server.listen)`)
    // This test's own process holds it; /proc shows a process of the same user to dlsync.
    assert.match(line, new RegExp(`\\(port ${port} is held by \\S+ \\(pid ${process.pid}\\)\\)$`))
  })
})

describe("emulator", { timeout: 60_000 }, () => {
  it("its port in use: 75, saying how to choose another", async () => {
    const home = tempDir()
    const port = await busyPort()
    const line = oneLine(await runCli(["emulator", "--port", String(port)], bareEnv(home), 20_000), 75)
    assert.include(line, `cannot start the emulator: 127.0.0.1:${port} is already in use`)
    assert.include(line, "--port")
  })
})

describe("status", { timeout: 60_000 }, () => {
  it("on a state directory dlsync never ran with: says so, exit 78, creates nothing", async () => {
    box = await sandbox()
    const empty = Path.join(box.dir, "someone-else")
    const line = oneLine(await box.run(["status"], { stateDir: empty }), 78)
    assert.include(line, `no dlsync state in ${empty}`)
    assert.isFalse(Fs.existsSync(empty), "nothing created")
  })

  it("its hint for the systemd service's state works as printed (the install's paths standing in)", async () => {
    box = await sandbox()
    const line = oneLine(await box.run(["status"], { stateDir: Path.join(box.dir, "someone-else") }), 78)
    const hint = /`(sudo -u dlsync [^`]+)`/.exec(line)?.[1]
    assert.isDefined(hint, line)
    // The service's state, made by a pass of its own; its configuration file, as installed.
    const serviceState = Path.join(box.dir, "var-lib-dlsync")
    assert.strictEqual((await box.run(["run", "--once"], { stateDir: serviceState, apiKey: true })).code, 0)
    const configFile = Path.join(box.dir, "config.toml")
    Fs.writeFileSync(
      configFile,
      `[service]\nbase_url = "${box.emu.baseUrl}"\napi_key = "${box.emu.apiKey}"\n[mirror]\nroot = "${box.root}"\n`
    )
    const repo = Path.resolve(import.meta.dirname, "../..")
    const command = hint!
      .replace(/^sudo -u dlsync /, "")
      .replaceAll("/var/lib/dlsync", serviceState)
      .replaceAll("/etc/dlsync/config.toml", configFile)
      .replaceAll("/opt/dlsync", repo)
    const result = spawnSync("/bin/sh", ["-c", command], { env: bareEnv(tempDir()), encoding: "utf8", timeout: 30_000 })
    assert.strictEqual(result.status, 0, `${command}\n${result.stderr}`)
    assert.include(result.stdout, "mode")
  })
})

describe("log levels", { timeout: 60_000 }, () => {
  it("--log-level and log.level take the same names", async () => {
    box = await sandbox()
    for (const level of ["trace", "debug", "info", "warn", "error", "off"]) {
      const flag = await box.run(["config", "check", "--log-level", level], { apiKey: true })
      assert.strictEqual(flag.code, 0, `--log-level ${level}: ${flag.stderr}`)
      const key = await box.run(["config", "check"], { apiKey: true, env: { DLSYNC_LOG_LEVEL: level } })
      assert.strictEqual(key.code, 0, `log.level = ${level}: ${key.stderr}`)
    }
    const flag = await box.run(["config", "check", "--log-level", "none"], { apiKey: true })
    assert.strictEqual(flag.code, 64)
    const key = await box.run(["config", "check"], { apiKey: true, env: { DLSYNC_LOG_LEVEL: "none" } })
    assert.strictEqual(key.code, 78)
  })

  it("--log-level off silences the log, --log-level debug overrides log.level", async () => {
    box = await sandbox()
    const quiet = await box.run(["config", "check", "--log-level", "off"], { apiKey: true })
    assert.strictEqual(quiet.stderr, "")
    const loud = await box.run(["run", "--once", "--log-level", "debug"], {
      apiKey: true,
      env: { DLSYNC_LOG_LEVEL: "error" }
    })
    assert.strictEqual(loud.code, 0, loud.stderr)
    assert.include(loud.stderr, '"level":"debug"')
  })
})
