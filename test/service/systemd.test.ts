/**
 * The systemd units pass `systemd-analyze verify` (with no warning at all), their user is
 * created by the sysusers file, and their sandbox stays in systemd's "OK" exposure band.
 *
 * verify checks that ExecStart's binary exists and is executable, so it runs against a
 * temporary root: the stock units (targets the services depend on) copied in, the real
 * launcher copied to its install path /opt/dlsync/bin/dlsync.js (executable bit kept), the
 * units in /etc/systemd/system and the user created there by systemd-sysusers.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { requireTools, skipWithout } from "./systemdTools.ts"

const TOOLS = ["systemd-analyze", "systemd-sysusers"]
const repo = fileURLToPath(new URL("../..", import.meta.url))
const unitsDir = Path.join(repo, "systemd")
const UNITS = ["dlsync.service", "dlsync@.service", "dlsync-once.service", "dlsync.timer"]
const SERVICES = ["dlsync.service", "dlsync@.service", "dlsync-once.service"]
/** How verify names a template: through one of its instances. */
const verifyName = (unit: string) => unit.replace("@.", "@family.")

const run = (command: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 20_000 })
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() }
}

/** The unit's values for a key, in order (a unit may repeat a key). */
const values = (unit: string, key: string): Array<string> =>
  Fs.readFileSync(Path.join(unitsDir, unit), "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1))

const makeRoot = (): string => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-systemd-"))
  const stock = ["/usr/lib/systemd/system", "/lib/systemd/system"].find((d) => Fs.existsSync(d))
  if (stock === undefined) throw new Error("no stock systemd units found (/usr/lib/systemd/system)")
  Fs.cpSync(stock, Path.join(root, "usr/lib/systemd/system"), { recursive: true, verbatimSymlinks: true })
  // A symlink out of the root would not resolve inside it: copy the launcher, mode included.
  Fs.mkdirSync(Path.join(root, "opt/dlsync/bin"), { recursive: true })
  Fs.copyFileSync(Path.join(repo, "bin/dlsync.js"), Path.join(root, "opt/dlsync/bin/dlsync.js"))
  Fs.mkdirSync(Path.join(root, "etc/systemd/system"), { recursive: true })
  for (const unit of UNITS) Fs.copyFileSync(Path.join(unitsDir, unit), Path.join(root, "etc/systemd/system", unit))
  Fs.mkdirSync(Path.join(root, "etc/sysusers.d"), { recursive: true })
  Fs.copyFileSync(Path.join(unitsDir, "dlsync-sysusers.conf"), Path.join(root, "etc/sysusers.d/dlsync.conf"))
  return root
}

describe.skipIf(skipWithout(TOOLS))("systemd units", () => {
  let root = ""
  beforeAll(() => {
    requireTools(TOOLS)
    root = makeRoot()
  })
  afterAll(() => {
    if (root !== "") Fs.rmSync(root, { recursive: true, force: true })
  })

  it("create their user with systemd-sysusers: a system user with no login shell", () => {
    const result = run("systemd-sysusers", [`--root=${root}`])
    assert.strictEqual(result.status, 0, result.output)
    const passwd = Fs.readFileSync(Path.join(root, "etc/passwd"), "utf8")
    const entry = passwd.split("\n").find((line) => line.startsWith("dlsync:"))
    assert.isDefined(entry, passwd)
    const [, , uid, , , home, shell] = entry!.split(":")
    assert.isBelow(Number(uid), 1000, "a system uid")
    assert.strictEqual(home, "/var/lib/dlsync")
    assert.strictEqual(shell, "/usr/sbin/nologin")
    for (const service of SERVICES) assert.deepStrictEqual(values(service, "User"), ["dlsync"], service)
  })

  it("pass systemd-analyze verify without a single warning", () => {
    const result = run("systemd-analyze", ["verify", `--root=${root}`, ...UNITS.map(verifyName)])
    assert.strictEqual(result.status, 0, result.output)
    assert.strictEqual(result.output, "", "verify printed warnings")
  })

  it("pass the check systemd/README.md gives for a checkout, as written there", () => {
    const readme = Fs.readFileSync(Path.join(unitsDir, "README.md"), "utf8")
    const section = readme.split("## Checking the units before installing")[1] ?? ""
    const command = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
    assert.isDefined(command, "systemd/README.md has its check")
    const result = spawnSync("/bin/sh", ["-c", command!], { cwd: repo, encoding: "utf8", timeout: 20_000 })
    assert.strictEqual(result.status, 0, `${result.stdout}${result.stderr}`)
    assert.strictEqual(`${result.stdout}${result.stderr}`, "", "verify printed warnings")
  })

  it("and verify does catch a broken unit (the check can fail)", () => {
    const broken = Fs.readFileSync(Path.join(unitsDir, "dlsync.service"), "utf8")
      .replace("ProtectClock=yes", "ProtectClok=yes")
      .replace("ExecStart=/opt/dlsync/bin/dlsync.js", "ExecStart=/opt/dlsync/bin/missing.js")
    Fs.writeFileSync(Path.join(root, "etc/systemd/system/broken.service"), broken)
    const result = run("systemd-analyze", ["verify", `--root=${root}`, "broken.service"])
    assert.include(result.output, "Unknown key 'ProtectClok'")
    assert.include(result.output, "missing.js")
  })

  it("keep their sandbox in systemd-analyze security's OK band (exposure <= 2.0)", () => {
    for (const service of SERVICES) {
      const result = run("systemd-analyze", ["security", "--offline=true", `--root=${root}`, verifyName(service)])
      const exposure = /Overall exposure level for \S+: (\d+\.\d+)/.exec(result.output)
      assert.isNotNull(exposure, result.output)
      assert.isAtMost(Number(exposure![1]), 2.0, `${service}\n${result.output}`)
    }
  })

  it("restart the daemon on failure but not on 64, 77, 78, and stop within the graceful shutdown plus a margin", () => {
    for (const service of ["dlsync.service", "dlsync@.service"]) {
      assert.deepStrictEqual(values(service, "Restart"), ["on-failure"])
      assert.deepStrictEqual(values(service, "RestartPreventExitStatus"), ["64 77 78"])
      assert.deepStrictEqual(values(service, "Type"), ["notify"])
      assert.deepStrictEqual(values(service, "NotifyAccess"), ["all"])
    }
    assert.deepStrictEqual(values("dlsync-once.service", "Type"), ["oneshot"])
    assert.deepStrictEqual(values("dlsync-once.service", "ExecStart"), ["/opt/dlsync/bin/dlsync.js run --once"])
    assert.deepStrictEqual(values("dlsync@.service", "Environment").at(-1), "DLSYNC_CONFIG=/etc/dlsync/%i.toml")
    assert.deepStrictEqual(values("dlsync@.service", "StateDirectory"), ["dlsync/%i"])
    for (const service of SERVICES) {
      const stop = Number(/^(\d+)s$/.exec(values(service, "TimeoutStopSec")[0] ?? "")?.[1])
      assert.isAbove(stop, 10, service)
      assert.isAtMost(stop, 30, service)
      assert.deepStrictEqual(values(service, "ProtectSystem"), ["strict"])
      assert.deepStrictEqual(values(service, "MemoryDenyWriteExecute"), [], "V8's JIT needs W+X memory")
      assert.deepStrictEqual(values(service, "RestrictAddressFamilies"), ["AF_INET AF_INET6 AF_UNIX"])
      // SIGTERM to the main process only: the launcher, which passes it on to dlsync and waits
      // (test/cli/launcher.test.ts stops it so); SIGKILL to all when TimeoutStopSec runs out.
      assert.deepStrictEqual(values(service, "KillMode"), ["mixed"], service)
      assert.match(values(service, "ExecStart")[0] ?? "", /^\/opt\/dlsync\/bin\/dlsync\.js run\b/, service)
    }
  })
})
