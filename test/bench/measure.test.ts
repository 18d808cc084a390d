/**
 * bench/support/tools.ts `measure`: the CPU it reports is the measured command's alone, even
 * when `python3` (its wrapper's interpreter) is a launcher script that runs helper processes
 * first, as pyenv's shim does: their CPU was added to every row of the benchmark.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { measure } from "../../bench/support/tools.ts"

let dir = ""

beforeEach(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-measure-"))
})

afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** A shell loop that runs for `seconds`, starting a process each turn. */
const burnFor = (seconds: number) =>
  `end=$(($(date +%s%N) + ${Math.round(seconds * 1e9)})); while [ $(date +%s%N) -lt $end ]; do :; done`

/** A shell loop of `turns` additions: CPU, whatever else the machine is doing. */
const count = (turns: number) => `i=0; while [ $i -lt ${turns} ]; do i=$((i + 1)); done`

describe("measure", () => {
  it("counts the command's CPU, not what a python3 launcher script ran before Python started", () => {
    const python = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => Fs.existsSync(p))
    assert.isDefined(python, "a python3 outside PATH shims")
    // A shim as pyenv's is: helpers as its children, then `exec` into Python.
    Fs.writeFileSync(Path.join(dir, "python3"), `#!/bin/sh\nsh -c '${burnFor(0.4)}'\nexec ${python} "$@"\n`, {
      mode: 0o755
    })
    const env = { PATH: `${dir}:${process.env.PATH ?? ""}` }
    const idle = measure("/bin/sh", ["-c", "true"], env)
    assert.isBelow(idle.cpuSeconds, 0.1)
    // The command's own CPU is all there.
    const busy = measure("/bin/sh", ["-c", count(300_000)], env)
    assert.isAbove(busy.cpuSeconds - idle.cpuSeconds, 0.05)
  })
})
