/**
 * bin/dlsync.js chooses what to run: the bundle while it is newer than every source and the
 * lock file, the sources otherwise (an edited source never runs stale). Each case is a copy
 * of the launcher in a scratch tree whose `src/main.ts` and `dist/dlsync.mjs` say who ran.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { type Sandbox, sandbox } from "../integration/harness.ts"
import { startThenSigterm } from "../service/sigterm.ts"

const launcher = Path.resolve(import.meta.dirname, "../../bin/dlsync.js")
let tree = ""

const write = (rel: string, text: string, mtimeSeconds: number) => {
  const path = Path.join(tree, rel)
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.writeFileSync(path, text)
  Fs.utimesSync(path, mtimeSeconds, mtimeSeconds)
}

/** The caller's environment, with no cache directory: the user's own belongs to the real build. */
const noCache = (): NodeJS.ProcessEnv => {
  const { XDG_CACHE_HOME: _xdg, CACHE_DIRECTORY: _unit, ...env } = process.env
  return { ...env, HOME: Path.join(tree, "no-home") }
}

/** What the scratch tree's launcher prints, started by this Node with `nodeFlags` before it. */
const launch = (env: NodeJS.ProcessEnv, nodeFlags: ReadonlyArray<string> = []) =>
  execFileSync(process.execPath, [...nodeFlags, Path.join(tree, "bin", "dlsync.js")], { encoding: "utf8", env }).trim()

const whoRuns = () => launch(noCache())

beforeEach(() => {
  tree = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-launcher-"))
  Fs.mkdirSync(Path.join(tree, "bin"))
  Fs.copyFileSync(launcher, Path.join(tree, "bin", "dlsync.js"))
  write("src/main.ts", 'console.log("sources")\n', 1_000)
  write("src/deep/module.ts", "export {}\n", 1_000)
  write("package-lock.json", "{}\n", 1_000)
})

afterEach(() => Fs.rmSync(tree, { recursive: true, force: true }))

describe("bin/dlsync.js", () => {
  it("runs the sources when there is no bundle", () => {
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the bundle when it is newer than every source and the lock file", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    assert.strictEqual(whoRuns(), "bundle")
  })

  it("runs the sources when any source, however deep, is newer than the bundle", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("src/deep/module.ts", "export const edited = 1\n", 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  it("runs the sources when the dependencies changed after the bundle was built", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    write("package-lock.json", '{"changed":true}\n', 3_000)
    assert.strictEqual(whoRuns(), "sources")
  })

  /** What a scratch bundle that prints its process's settings reports, started by `start`. */
  const settingsWhenStarted = (start: () => string) => {
    write(
      "dist/dlsync.mjs",
      "console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX, mmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ }))\n",
      2_000
    )
    return JSON.parse(start())
  }
  const daemonSettings = [
    "--max-semi-space-size=1",
    "--optimize-for-size",
    "--max-opt=1",
    "--liftoff-only",
    "--no-concurrent-sparkplug"
  ]

  it("runs it with a small young generation, no TurboFan and glibc's malloc set for a daemon, in the launcher's own process", () => {
    const ran = settingsWhenStarted(whoRuns)
    assert.includeMembers(ran.execArgv, daemonSettings)
    assert.strictEqual(ran.arenas, "2")
    assert.strictEqual(ran.mmapThreshold, "32768")
    // execve, not a child: the process this test started (a supervisor's) is the one that runs.
    assert.strictEqual(ran.ppid, process.pid)
  })

  it("started as a program, its shell lines start the Node beside it once, with the same settings", () => {
    const asProgram = (env: NodeJS.ProcessEnv) =>
      execFileSync(Path.join(tree, "bin", "dlsync.js"), [], { encoding: "utf8", env }).trim()
    // The Node 24 that `npm ci` installs beside dlsync: this test's own.
    const localNode = Path.join(tree, "node_modules/node/bin/node")
    Fs.mkdirSync(Path.dirname(localNode), { recursive: true })
    Fs.symlinkSync(process.execPath, localNode)
    // A `node` on PATH that must not run (an old system Node would refuse --max-opt).
    const pathNode = Path.join(tree, "path-bin", "node")
    write("path-bin/node", "#!/bin/sh\necho 'the node on PATH ran' >&2\nexit 9\n", 1_000)
    Fs.chmodSync(pathNode, 0o755)
    // Each start of Node adds a line (the JavaScript's re-execution would be a second).
    const starts = Path.join(tree, "starts")
    write(
      "count-start.mjs",
      `import * as Fs from "node:fs"; Fs.appendFileSync(${JSON.stringify(starts)}, "start\\n")\n`,
      1_000
    )
    const counted = {
      ...noCache(),
      PATH: `${Path.dirname(pathNode)}:/usr/bin:/bin`,
      NODE_OPTIONS: `--import=${Path.join(tree, "count-start.mjs")}`
    }
    const ran = settingsWhenStarted(() => asProgram(counted))
    assert.strictEqual(Fs.readFileSync(starts, "utf8"), "start\n", "one start of Node")
    const byNode = settingsWhenStarted(() => launch(counted))
    assert.strictEqual(Fs.readFileSync(starts, "utf8"), "start\n".repeat(3), "`node bin/dlsync.js` re-executes")
    assert.deepStrictEqual(ran.execArgv, byNode.execArgv)
    assert.deepStrictEqual([ran.arenas, ran.mmapThreshold], [byNode.arenas, byNode.mmapThreshold])
    assert.strictEqual(ran.ppid, process.pid, "the shell execs Node, which runs the bundle itself")
    // Settings the user gave are theirs, as for `node bin/dlsync.js`.
    const own = settingsWhenStarted(() =>
      asProgram({ ...counted, NODE_OPTIONS: "--max-semi-space-size=8", MALLOC_ARENA_MAX: "4" })
    )
    assert.deepStrictEqual(own.execArgv, [])
    assert.strictEqual(own.arenas, "4")
    const arenas = settingsWhenStarted(() => asProgram({ ...counted, MALLOC_ARENA_MAX: "8" }))
    assert.includeMembers(arenas.execArgv, daemonSettings)
    assert.deepStrictEqual([arenas.arenas, arenas.mmapThreshold], ["8", "32768"])
    // Without a Node beside it (installed without devDependencies): the `node` on PATH runs
    // the JavaScript, which re-executes itself with the settings.
    Fs.rmSync(Path.join(tree, "node_modules"), { recursive: true })
    Fs.rmSync(starts)
    const onPath = settingsWhenStarted(() => asProgram({ ...counted, PATH: process.env.PATH ?? "" }))
    assert.strictEqual(Fs.readFileSync(starts, "utf8"), "start\n".repeat(2))
    assert.deepStrictEqual(onPath.execArgv, byNode.execArgv)
  })

  it("lets a Node flag given to it win over its own (given after them)", () => {
    write("dist/dlsync.mjs", "console.log(JSON.stringify(process.execArgv))\n", 2_000)
    const execArgv = JSON.parse(launch(noCache(), ["--max-opt=4"]))
    // V8 reads its flags in order: the last one given is in force (bench/run.ts's
    // --dlsync-node-flags=--max-opt=999 measures dlsync with TurboFan so).
    assert.isAbove(execArgv.lastIndexOf("--max-opt=4"), execArgv.indexOf("--max-opt=1"))
  })

  it("keeps V8's code cache in the user's own cache directory (systemd's CacheDirectory= first), never a shared one", () => {
    write("dist/dlsync.mjs", 'import * as M from "node:module"; console.log(M.getCompileCacheDir() ?? "")\n', 2_000)
    // A folder per build (this bundle's: bundle-2000000), where Node keeps its entries in a
    // subfolder per Node version and V8 flags.
    const cacheDir = (env: Record<string, string>) => {
      const used = launch({ PATH: process.env.PATH ?? "", ...env })
      if (used === "") return "."
      assert.strictEqual(Path.basename(Path.dirname(used)), "bundle-2000000")
      return Path.dirname(Path.dirname(used))
    }
    const home = Path.join(tree, "home")
    for (const dir of ["home", "xdg", "unit"]) Fs.mkdirSync(Path.join(tree, dir))
    assert.strictEqual(cacheDir({ HOME: home }), Path.join(home, ".cache/dlsync/compile-cache"))
    assert.strictEqual(Fs.statSync(Path.join(home, ".cache/dlsync")).mode & 0o777, 0o700)
    assert.strictEqual(
      cacheDir({ HOME: home, XDG_CACHE_HOME: Path.join(tree, "xdg") }),
      Path.join(tree, "xdg/dlsync/compile-cache")
    )
    assert.strictEqual(
      cacheDir({ HOME: home, CACHE_DIRECTORY: Path.join(tree, "unit") }),
      Path.join(tree, "unit/compile-cache")
    )
    assert.strictEqual(cacheDir({}), ".", "no home: no cache rather than /tmp")
    assert.strictEqual(
      cacheDir({ HOME: Path.join(tree, "nonexistent") }),
      ".",
      "a home that does not exist is not made"
    )
    assert.isFalse(Fs.existsSync(Path.join(tree, "nonexistent")))
    // Node's own recursive mkdir never returns there.
    assert.strictEqual(cacheDir({ HOME: "/proc/nonexistent" }), ".")
    assert.strictEqual(cacheDir({ HOME: home, NODE_DISABLE_COMPILE_CACHE: "1" }), ".")
  })

  it("keeps the code cache of the build that runs only: an update's older entries are removed", () => {
    const root = Path.join(tree, "home/.cache/dlsync/compile-cache")
    const run = () => launch({ PATH: process.env.PATH ?? "", HOME: Path.join(tree, "home") })
    const builds = () => Fs.readdirSync(root).sort()
    const entries = (build: string) => Fs.readdirSync(Path.join(root, build), { recursive: true }).length
    Fs.mkdirSync(root, { recursive: true })
    // The layout before builds had folders: Node's own version folder at the top.
    Fs.mkdirSync(Path.join(root, "v24.0.0-x64-00000000-0"))
    Fs.writeFileSync(Path.join(root, "v24.0.0-x64-00000000-0", "0a1b2c3d"), "an entry")
    assert.strictEqual(run(), "sources")
    assert.deepStrictEqual(builds(), ["sources"])
    assert.isAbove(entries("sources"), 0, "the sources' entries are written")
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    assert.strictEqual(run(), "bundle")
    assert.deepStrictEqual(builds(), ["bundle-2000000"])
    assert.isAbove(entries("bundle-2000000"), 0)
    assert.strictEqual(run(), "bundle")
    assert.deepStrictEqual(builds(), ["bundle-2000000"], "a second start keeps its own")
    // An update: a newer bundle.
    write("dist/dlsync.mjs", 'console.log("update")\n', 3_000)
    assert.strictEqual(run(), "update")
    assert.deepStrictEqual(builds(), ["bundle-3000000"])
  })

  it("runs the bundle where no sources ship (the container image)", () => {
    write("dist/dlsync.mjs", 'console.log("bundle")\n', 2_000)
    Fs.rmSync(Path.join(tree, "src"), { recursive: true })
    Fs.rmSync(Path.join(tree, "package-lock.json"))
    assert.strictEqual(whoRuns(), "bundle")
  })
})

/**
 * SIGTERM to the process that the README's command lines start stops dlsync: no dlsync
 * process survives it (the whole tree under that process, read from /proc), the state
 * lock is released and the exit is clean. Each runs against the emulator with PATH as a
 * user's shell has it: the system Node (20 on a fresh machine) instead of the Node 24 of
 * node_modules/.bin that runs these tests. Started as a program, the launcher runs on
 * node_modules/node; started by the system Node 20, it runs it as a child.
 */
describe("SIGTERM to the started process stops dlsync", { timeout: 120_000 }, () => {
  const repo = Path.resolve(import.meta.dirname, "../..")
  const bundledNode = Fs.realpathSync(Path.join(repo, "node_modules/node/bin/node"))
  const userPath = (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => !dir.includes(Path.join("node_modules", ".bin")))
    .join(":")
  let box: Sandbox | undefined

  afterEach(async () => {
    await box?.close()
    box = undefined
  })

  /**
   * `runsOn`: where dlsync runs on node_modules/node: in the started process itself (a
   * program's start), below it (npx), or wherever the system's Node takes it.
   */
  const stopsCleanly = async (
    command: string,
    args: ReadonlyArray<string>,
    extra: Record<string, string> = {},
    runsOn: "started" | "below" | "any" = "started"
  ) => {
    box = await sandbox()
    const env = box.env({ PATH: userPath, ...extra })
    // Not the npm settings of the `npm test` or `npx vitest` that runs this file.
    for (const key of Object.keys(env)) if (/^npm_/i.test(key) || key === "INIT_CWD") delete env[key]
    const stopped = await startThenSigterm({ command, args, cwd: repo, env, stateDir: box.stateDir })
    const [started] = stopped.tree
    assert.include(
      stopped.tree.map((p) => p.pid),
      stopped.lockHolder,
      "dlsync runs under the started process"
    )
    if (runsOn === "started") assert.strictEqual(started?.exe, bundledNode, "no process in between")
    if (runsOn === "below") assert.isTrue(stopped.tree.some((p) => p.exe === bundledNode))
    assert.deepStrictEqual(stopped.exit, { code: 0, signal: null }, stopped.output)
    assert.deepStrictEqual(stopped.survivors, [], "no process of the started tree survives")
    assert.isTrue(stopped.lockReleased, "the state lock is released")
  }

  it("`dlsync run`, with `dlsync` on PATH as `npm link` puts it", async () => {
    // npm link's layout: <prefix>/bin/dlsync -> ../lib/node_modules/dlsync/bin/dlsync.js,
    // <prefix>/lib/node_modules/dlsync -> the checkout. Made by hand: `npm link` would
    // also rebuild dist/ under the other tests running now.
    const prefix = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-link-"))
    try {
      Fs.mkdirSync(Path.join(prefix, "bin"))
      Fs.mkdirSync(Path.join(prefix, "lib", "node_modules"), { recursive: true })
      Fs.symlinkSync(repo, Path.join(prefix, "lib", "node_modules", "dlsync"))
      Fs.symlinkSync("../lib/node_modules/dlsync/bin/dlsync.js", Path.join(prefix, "bin", "dlsync"))
      await stopsCleanly("dlsync", ["run"], { PATH: `${Path.join(prefix, "bin")}:${userPath}` })
    } finally {
      Fs.rmSync(prefix, { recursive: true, force: true })
    }
  })

  it("`/path/to/dlsync/bin/dlsync.js run`, the launcher by its path as the systemd units run it", async () => {
    await stopsCleanly(Path.join(repo, "bin", "dlsync.js"), ["run"])
  })

  it("`npx dlsync run` in the checkout (npm forwards SIGTERM to dlsync itself)", async () => {
    // The user's own npm cache, as for any npx.
    await stopsCleanly("npx", ["dlsync", "run"], { HOME: Os.homedir() }, "below")
  })

  it("`node bin/dlsync.js run` with the system's Node (older than 24 on a fresh machine: dlsync runs as its child)", async () => {
    const major = execFileSync("node", ["-p", "process.versions.node.split('.')[0]"], {
      env: { PATH: userPath },
      encoding: "utf8"
    })
    await stopsCleanly("node", [Path.join(repo, "bin", "dlsync.js"), "run"], {}, Number(major) < 24 ? "below" : "any")
  })
})
