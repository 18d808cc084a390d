/**
 * A child process that downloads one file with the real engine and a durable JSON
 * journal, for the SIGKILL tests. Argument: a JSON `ChildJob`. Prints the result as JSON.
 */
import { Effect, Layer } from "effect"
import { jsonFileJournalLayer } from "../../../bench/support/jsonFileJournal.ts"
import { FileId } from "../../../src/domain/FileId.ts"
import { Bandwidth } from "../../../src/transfer/Bandwidth.ts"
import { ProgressTracker } from "../../../src/transfer/ProgressTracker.ts"
import { TransferEngine } from "../../../src/transfer/TransferEngine.ts"
import { TransferFs } from "../../../src/transfer/TransferFs.ts"
import { TransferLinks } from "../../../src/transfer/TransferLinks.ts"
import { transferOptions } from "../../../src/transfer/TransferOptions.ts"

export interface ChildJob {
  readonly url: string
  readonly root: string
  readonly journal: string
  readonly fileId: string
  readonly size: number
  readonly options: Record<string, number | string | null>
}

const job: ChildJob = JSON.parse(process.argv[2] ?? "{}")

const layer = TransferEngine.layer(transferOptions({ min_free_space: 0, ...job.options })).pipe(
  Layer.provide([
    jsonFileJournalLayer(job.journal),
    TransferFs.layer,
    Layer.succeed(
      TransferLinks,
      TransferLinks.of({ getLink: () => Effect.succeed({ url: job.url, expiresAt: new Date(Date.now() + 3_600_000) }) })
    ),
    Bandwidth.unlimited,
    ProgressTracker.layer
  ])
)

const program = Effect.gen(function* () {
  const engine = yield* TransferEngine
  const result = yield* engine.download({
    fileId: FileId.make(job.fileId),
    size: job.size,
    remoteMtime: new Date("2024-03-04T05:06:07.000Z"),
    root: job.root,
    path: "out.bin",
    replace: null
  })
  // The landed lstat holds bigints, which JSON has no numbers for.
  process.stdout.write(`${JSON.stringify(result, (_, v) => (typeof v === "bigint" ? String(v) : v))}\n`)
}).pipe(Effect.provide(layer))

Effect.runPromise(program).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(2)
  }
)
