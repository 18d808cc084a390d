/**
 * `node bench/statusDocument.ts [--files 10000] [--runs 20]`: how long the status document
 * (`dlsync status --json`, `/api/status`, the web page's first data) takes with a mirror of
 * `--files` synced files in 100 folders, read from a real store in a temp state dir: walked
 * at every call (`dlsync status`), and with the daemon's summary kept until the store
 * changes (`/api/status`). Prints the median and the range over `--runs` calls, the first
 * call apart (cold), and the size of its JSON.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { remoteVersionOf } from "../src/domain/LocalEntry.ts"
import { upsert } from "../src/domain/RemoteItem.ts"
import { cachedMirrorSummary } from "../src/engine/mirrorSummary.ts"
import { statusDocument } from "../src/engine/statusDocument.ts"
import { Store } from "../src/store/Store.ts"
import { statusSettings } from "../test/engine/statusFixtures.ts"
import { withStore } from "../test/store/helpers.ts"
import { file, folder } from "../test/sync/fixtures.ts"

const { values } = parseArgs({
  options: { files: { type: "string", default: "10000" }, runs: { type: "string", default: "20" } }
})
const files = Number(values.files)
const runs = Number(values.runs)
const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dlsync-bench-status-"))

const program = Effect.gen(function* () {
  const settings = yield* statusSettings(stateDir)
  return yield* withStore(
    stateDir,
    Effect.gen(function* () {
      const store = yield* Store
      const items = []
      for (let f = 0; f < 100; f++) items.push(folder(`d${f}`, `Folder ${f}`))
      for (let i = 0; i < files; i++) {
        items.push(file(`f${i}`, `file-${i}.mkv`, `d${i % 100}`, { size: 1_000_000 + i }))
      }
      yield* store.feed.applyPage({ changes: items.map(upsert), nextCursor: "c1", hasMore: false })
      for (const item of items) {
        const path = item.type === "folder" ? item.name : `Folder ${Number(item.id.slice(1)) % 100}/${item.name}`
        yield* store.local.put({
          path,
          remoteId: item.id,
          type: item.type,
          written: { size: item.size, mtimeNs: 0n, ino: 1n },
          remote: remoteVersionOf(item),
          state: "synced",
          attempts: 0,
          lastError: null
        })
      }
      const time = Effect.fnUntraced(function* (options: Parameters<typeof statusDocument>[3]) {
        const times: Array<number> = []
        let bytes = 0
        for (let run = 0; run <= runs; run++) {
          const started = performance.now()
          const document = yield* statusDocument(store, settings, undefined, options)
          bytes = JSON.stringify(document).length
          times.push(performance.now() - started)
        }
        return { times, bytes }
      })
      return {
        walked: yield* time({}),
        cached: yield* time({ summary: cachedMirrorSummary(store, settings) })
      }
    })
  )
})

const results = await Effect.runPromise(program)
Fs.rmSync(stateDir, { recursive: true, force: true })
const ms = (n: number | undefined) => `${(n ?? 0).toFixed(1)} ms`
console.log(`status document, ${files} files in 100 folders, ${runs} calls after the first:`)
for (const [name, { times, bytes }] of Object.entries(results)) {
  const [cold, ...warm] = times
  warm.sort((a, b) => a - b)
  console.log(
    `  ${name.padEnd(7)} first ${ms(cold)}; median ${ms(warm[Math.floor(warm.length / 2)])} (${ms(warm[0])}–${ms(warm.at(-1))}); JSON ${bytes} bytes`
  )
}
