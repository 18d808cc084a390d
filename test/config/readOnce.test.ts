/**
 * The real CLI reads its configuration once, for the logger and the command (main.ts): a
 * configuration file that can be read only once (a named pipe written once) works, and a
 * broken one is reported as always (78, every problem with its file:line).
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { spawnCli } from "../integration/harness.ts"

let dir: string | undefined
afterEach(() => {
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** A named pipe that yields `text` to its first reader only. */
const pipeOnce = (text: string) => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-config-once-"))
  const file = Path.join(dir, "config.toml")
  execFileSync("mkfifo", [file])
  const written = Fs.promises.writeFile(file, text)
  /** Unblocks the writer when no reader came (a non-blocking open counts as one). */
  const release = async () => {
    Fs.closeSync(Fs.openSync(file, Fs.constants.O_RDONLY | Fs.constants.O_NONBLOCK))
    await written.catch(() => undefined)
  }
  return { file, dir, release }
}

const cliEnv = (home: string, extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("DLSYNC_")) env[k] = v
  return { ...env, HOME: home, XDG_CONFIG_HOME: Path.join(home, "xdg"), NO_COLOR: "1", ...extra }
}

describe("the configuration is read once", { timeout: 60_000 }, () => {
  it("config check --config PIPE: loads and prints it", async () => {
    const pipe = pipeOnce(
      `[service]\nbase_url = "http://127.0.0.1:9/api/v1"\napi_key = "k"\n\n[mirror]\nroot = "mirror"\n\n[log]\nlevel = "debug"\n`
    )
    // config check checks what `run` needs: the root must exist.
    Fs.mkdirSync(Path.join(pipe.dir, "mirror"))
    const result = await spawnCli(["config", "check", "--config", pipe.file], cliEnv(pipe.dir), 20_000).exit.finally(
      pipe.release
    )
    assert.strictEqual(result.code, 0, result.stderr)
    assert.include(result.stdout, `# configuration OK (${pipe.file})`)
    assert.include(result.stdout, `root = ${JSON.stringify(Path.join(pipe.dir, "mirror"))}`)
    assert.include(result.stdout, 'level = "debug"')
  })

  it("$DLSYNC_CONFIG=PIPE, broken: 78 with every problem and its line", async () => {
    const pipe = pipeOnce(`[service]\nbase_url = 12\n\n[mirror]\nroot = "mirror"\nbogus = 1\n`)
    const result = await spawnCli(["status"], cliEnv(pipe.dir, { DLSYNC_CONFIG: pipe.file }), 20_000).exit.finally(
      pipe.release
    )
    assert.strictEqual(result.code, 78, result.stderr)
    assert.include(result.stderr, "dlsync: configuration error")
    assert.include(result.stderr, `${pipe.file}:2: service.base_url`)
    assert.include(result.stderr, `${pipe.file}:6: mirror.bogus`)
  })
})
