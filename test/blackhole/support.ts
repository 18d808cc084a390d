/** The blackhole tests' folder, sweeper and files. */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeBlackhole } from "../../src/blackhole/Blackhole.ts"
import { Intake } from "../../src/intake/Intake.ts"
import { makeMemoryIntake } from "../support/MemoryIntake.ts"

export const NZB =
  '<?xml version="1.0"?>\n<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb"><file subject="s"></file></nzb>\n'
export const HASH = "0123456789abcdef0123456789abcdef01234567"
export const MAGNET = `magnet:?xt=urn:btih:${HASH}&dn=Show.S01E01`

/** A fresh watch folder, removed when the test ends. */
export const tempWatch = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "dlsync-blackhole-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** A sweeper over a fresh folder and in-memory intake; `settled` sweeps twice, SETTLE apart. */
export const setup = (before?: (watch: string) => void) =>
  Effect.gen(function* () {
    const watch = yield* tempWatch
    before?.(watch)
    const memory = makeMemoryIntake("/srv/dlsync")
    const blackhole = yield* makeBlackhole({ watch }).pipe(Effect.provideService(Intake, memory.intake))
    const settled = Effect.gen(function* () {
      yield* blackhole.sweep
      yield* TestClock.adjust("3 seconds")
      return yield* blackhole.sweep
    })
    return { watch, memory, blackhole, settled }
  })

export const write = (watch: string, rel: string, content: string | Uint8Array) => {
  Fs.mkdirSync(NodePath.dirname(NodePath.join(watch, rel)), { recursive: true })
  Fs.writeFileSync(NodePath.join(watch, rel), content)
}

export const listing = (dir: string): ReadonlyArray<string> => (Fs.existsSync(dir) ? Fs.readdirSync(dir).sort() : [])
