/**
 * The container entrypoint's contract, outside Docker: the real docker/entrypoint.sh runs
 * under /bin/sh with real directories in a temp dir. Only the commands that would change
 * this machine or need the image are stand-ins, put first on PATH: `id` (answers as the
 * image's users would), `groupmod`, `usermod`, `chown` (recorded, not run), `su-exec`
 * (recorded, then runs its command without switching user) and `node` (records its
 * arguments, environment and umask; or, for the end-to-end case, runs the real dlsync).
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { sandbox } from "../integration/harness.ts"
import { startThenSigterm } from "./sigterm.ts"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const entrypoint = Path.join(repo, "docker/entrypoint.sh")
const realNode = Path.join(repo, "node_modules/.bin/node")

interface Run {
  readonly status: number | null
  readonly stderr: string
  /** Recorded commands, one per line: "usermod -o -u 1234 dlsync". */
  readonly calls: ReadonlyArray<string>
  /** What the stand-in `node` saw, when it ran. */
  readonly node: { readonly argv: Array<string>; readonly env: Record<string, string>; readonly umask: string } | null
  readonly stdout: string
  readonly dirs: { readonly config: string; readonly state: string; readonly data: string }
}

const STUBS: Readonly<Record<string, string>> = {
  id: `case "$*" in
  -u) echo "\${FAKE_EUID:-0}" ;;
  "-u dlsync") echo "\${FAKE_DLSYNC_UID:-1000}" ;;
  "-g dlsync") echo "\${FAKE_DLSYNC_GID:-1000}" ;;
  *) echo "unexpected: id $*" >&2; exit 2 ;;
esac`,
  groupmod: `echo "groupmod $*" >> "$CALLS"`,
  usermod: `echo "usermod $*" >> "$CALLS"`,
  chown: `echo "chown $*" >> "$CALLS"`,
  "su-exec": `echo "su-exec $*" >> "$CALLS"
shift
# As root every path is writable: FAKE_UNWRITABLE plays a user who cannot write.
if [ "$1" = test ] && [ -n "\${FAKE_UNWRITABLE:-}" ]; then exit 1; fi
exec "$@"`,
  node: `echo "node $*" >> "$CALLS"
if [ -n "\${REAL_NODE:-}" ]; then
  app=$1; shift
  exec "$REAL_NODE" "$REPO\${app#/opt/dlsync}" "$@"
fi
"$FAKE_NODE_RECORDER" "$NODE_SEEN" "$@"`
}

/** Writes what the stand-in node saw as JSON (a shell script: no real node needed for it). */
const RECORDER = `#!/bin/sh
out=$1; shift
{
  printf '{"argv":['
  sep=""
  for a in "$@"; do printf '%s"%s"' "$sep" "$a"; sep=","; done
  printf '],"umask":"%s","env":{' "$(umask)"
  sep=""
  env | grep -E '^(DLSYNC_[A-Z_]*|HOME|TZ|STATE_DIRECTORY)=' | sort | while IFS= read -r line; do
    printf '%s"%s":"%s"' "$sep" "\${line%%=*}" "\${line#*=}"; sep=","
  done
  printf '}}'
} > "$out"
`

/** A temp dir with the stand-ins in `bin` and the recorder the stand-in node hands its arguments to. */
const stubs = () => {
  const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-entrypoint-"))
  temporary.push(tmp)
  const bin = Path.join(tmp, "bin")
  Fs.mkdirSync(bin)
  for (const [name, body] of Object.entries(STUBS)) {
    Fs.writeFileSync(Path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  }
  const recorder = Path.join(tmp, "record-node")
  Fs.writeFileSync(recorder, RECORDER, { mode: 0o755 })
  return { tmp, bin, recorder }
}

const runEntrypoint = (options: {
  readonly env?: Readonly<Record<string, string>>
  readonly args?: ReadonlyArray<string>
  readonly prepare?: (dirs: Run["dirs"]) => void
  readonly configFile?: boolean
  readonly realNode?: boolean
}): Run => {
  const { tmp, bin, recorder } = stubs()
  const dirs = {
    config: Path.join(tmp, "config"),
    state: Path.join(tmp, "config", "state"),
    data: Path.join(tmp, "data")
  }
  if (options.configFile === true) {
    Fs.mkdirSync(dirs.config, { recursive: true })
    Fs.writeFileSync(Path.join(dirs.config, "config.toml"), "")
  }
  options.prepare?.(dirs)
  const calls = Path.join(tmp, "calls")
  const seen = Path.join(tmp, "node-seen.json")
  const result = spawnSync("/bin/sh", [entrypoint, ...(options.args ?? ["run"])], {
    encoding: "utf8",
    timeout: 20_000,
    env: {
      PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
      CALLS: calls,
      NODE_SEEN: seen,
      FAKE_NODE_RECORDER: recorder,
      REPO: repo,
      ...(options.realNode === true ? { REAL_NODE: realNode } : {}),
      // The image's environment (Dockerfile ENV), and the mirror root a compose file sets.
      DLSYNC_CONFIG: Path.join(dirs.config, "config.toml"),
      STATE_DIRECTORY: dirs.state,
      DLSYNC_MIRROR_ROOT: dirs.data,
      ...options.env
    }
  })
  return {
    status: result.status,
    stderr: result.stderr,
    stdout: result.stdout,
    calls: Fs.existsSync(calls) ? Fs.readFileSync(calls, "utf8").trim().split("\n") : [],
    node: Fs.existsSync(seen) ? JSON.parse(Fs.readFileSync(seen, "utf8")) : null,
    dirs
  }
}

const temporary: Array<string> = []
afterAll(() => {
  for (const dir of temporary) Fs.rmSync(dir, { recursive: true, force: true })
})

const mode = (path: string) => (Fs.statSync(path).mode & 0o777).toString(8)

describe("docker/entrypoint.sh started as root", () => {
  it("gives the dlsync user PUID/PGID, hands it the config and state dirs, and execs dlsync as it", () => {
    const run = runEntrypoint({
      env: { PUID: "1234", PGID: "2345", DLSYNC_SERVICE_BASE_URL: "https://x.test/api/v1", TZ: "Europe/Berlin" },
      configFile: true
    })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(run.calls, [
      "groupmod -o -g 2345 dlsync",
      "usermod -o -u 1234 dlsync",
      `chown -R 1234:2345 ${run.dirs.config}`,
      `chown -R 1234:2345 ${run.dirs.state}`,
      `su-exec dlsync test -w ${run.dirs.data}`,
      "su-exec dlsync node /opt/dlsync/bin/dlsync.js run",
      "node /opt/dlsync/bin/dlsync.js run"
    ])
    assert.strictEqual(mode(run.dirs.state), "700", "the store and tokens are private")
    assert.isTrue(Fs.statSync(run.dirs.data).isDirectory())
    assert.deepStrictEqual(run.node?.argv, ["/opt/dlsync/bin/dlsync.js", "run"])
    assert.strictEqual(run.node?.umask, "0022")
    assert.deepStrictEqual(run.node?.env, {
      DLSYNC_CONFIG: Path.join(run.dirs.config, "config.toml"),
      DLSYNC_MIRROR_ROOT: run.dirs.data,
      DLSYNC_SERVICE_BASE_URL: "https://x.test/api/v1",
      HOME: run.dirs.config,
      STATE_DIRECTORY: run.dirs.state,
      TZ: "Europe/Berlin"
    })
  })

  it("changes nothing that is already right: ids as asked, dirs owned by them", () => {
    const run = runEntrypoint({
      env: { PUID: "1000", PGID: "1000", UMASK: "027" },
      args: ["status", "--json"],
      configFile: true,
      prepare: (dirs) => {
        Fs.mkdirSync(dirs.state, { recursive: true, mode: 0o755 })
        Fs.chownSync(dirs.config, 1000, 1000)
        Fs.chownSync(dirs.state, 1000, 1000)
      }
    })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(run.calls, [
      `su-exec dlsync test -w ${run.dirs.data}`,
      "su-exec dlsync node /opt/dlsync/bin/dlsync.js status --json",
      "node /opt/dlsync/bin/dlsync.js status --json"
    ])
    assert.strictEqual(mode(run.dirs.state), "700")
    assert.strictEqual(run.node?.umask, "0027")
  })

  it("never chowns the mirror (the user's data), and says so when PUID cannot write to it", () => {
    const run = runEntrypoint({
      prepare: (dirs) => {
        Fs.mkdirSync(dirs.data, { recursive: true })
        Fs.chownSync(dirs.data, 4321, 4321)
      },
      env: { FAKE_UNWRITABLE: "1" }
    })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.isFalse(run.calls.some((c) => c.startsWith("chown") && c.includes(run.dirs.data)))
    assert.strictEqual(Fs.statSync(run.dirs.data).uid, 4321)
    assert.include(run.stderr, `${run.dirs.data} is not writable by uid 1000`)
    // dlsync still starts: it reports the unwritable root itself, with its exit code.
    assert.strictEqual(run.calls.at(-1), "node /opt/dlsync/bin/dlsync.js run")
  })

  it("runs on DLSYNC_* variables alone when there is no config file", () => {
    const run = runEntrypoint({ env: { DLSYNC_SERVICE_BASE_URL: "https://x.test/api/v1" } })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.include(run.stderr, "using DLSYNC_* variables only")
    assert.isUndefined(run.node?.env.DLSYNC_CONFIG)
    assert.strictEqual(run.node?.env.DLSYNC_MIRROR_ROOT, run.dirs.data)
  })

  it("refuses bad PUID, PGID and UMASK with exit 78 before touching anything", () => {
    for (const env of [{ PUID: "abc" }, { PGID: "-1" }, { PUID: "1000; rm -rf /" }, { UMASK: "999" }, { UMASK: "" }]) {
      const run = runEntrypoint({ env: { ...env } })
      if (env.UMASK === "") {
        // An empty UMASK is unset: the default applies.
        assert.strictEqual(run.status, 0, run.stderr)
        continue
      }
      assert.strictEqual(run.status, 78, JSON.stringify(env))
      assert.match(run.stderr, /(PUID|PGID|UMASK) must be/)
      assert.deepStrictEqual(run.calls, [], JSON.stringify(env))
    }
  })
})

describe("docker/entrypoint.sh started as a non-root user (compose `user:`)", () => {
  it("changes no user or ownership and runs dlsync directly, noting that PUID is ignored", () => {
    const run = runEntrypoint({ env: { FAKE_EUID: "1000", PUID: "1234" }, args: ["run", "--once"] })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(run.calls, ["node /opt/dlsync/bin/dlsync.js run --once"])
    assert.include(run.stderr, "PUID/PGID are ignored")
    assert.deepStrictEqual(run.node?.argv, ["/opt/dlsync/bin/dlsync.js", "run", "--once"])
  })
})

describe("docker/entrypoint.sh end to end", () => {
  it("hands the image's DLSYNC_* defaults to the real dlsync (config check)", () => {
    const run = runEntrypoint({
      // config check also wants a credential, as `run` does.
      env: { DLSYNC_SERVICE_BASE_URL: "https://x.test/api/v1", DLSYNC_SERVICE_API_KEY: "k" },
      args: ["config", "check", "--json"],
      realNode: true
    })
    assert.strictEqual(run.status, 0, run.stderr)
    const printed: { settings: { mirror: { root: string; state_dir: string } } } = JSON.parse(run.stdout)
    assert.strictEqual(printed.settings.mirror.root, run.dirs.data)
    assert.strictEqual(printed.settings.mirror.state_dir, run.dirs.state)
  })
})

describe("docker/entrypoint.sh and `docker stop`", () => {
  it("execs all the way, so the started process is dlsync and SIGTERM to it stops dlsync cleanly", {
    timeout: 120_000
  }, async () => {
    const box = await sandbox()
    try {
      const { tmp, bin } = stubs()
      const stopped = await startThenSigterm({
        command: "/bin/sh",
        args: [entrypoint, "run"],
        cwd: tmp,
        env: {
          ...box.env(),
          PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
          CALLS: Path.join(tmp, "calls"),
          REPO: repo,
          REAL_NODE: realNode
        },
        stateDir: box.stateDir
      })
      assert.strictEqual(stopped.lockHolder, stopped.tree[0]?.pid, "the process tini started is dlsync itself")
      assert.deepStrictEqual(stopped.exit, { code: 0, signal: null }, stopped.output)
      assert.deepStrictEqual(stopped.survivors, [])
      assert.isTrue(stopped.lockReleased, "the state lock is released")
    } finally {
      await box.close()
    }
  })
})
