/**
 * One dlsync benchmark run in its own process, driving the transfer engine directly:
 * links come from the link server (one POST per file, with a bearer that only the API
 * origin sees), bytes from nginx. Prints one JSON line: wall seconds, CPU seconds and peak
 * RSS (sampled every 50 ms) of the transfer — process startup excluded, dlsync being a
 * daemon — plus the process's lifetime peak RSS, and the bytes fetched.
 * With `progress: true`, prints `progress <bytes>` lines every 20 ms (for the resume run).
 *   node bench/support/dlsyncRun.ts '<DlsyncJob JSON>'
 */
import * as Path from "node:path"
import { Effect, Layer } from "effect"
import { request } from "undici"
import { Database } from "../../src/store/Database.ts"
import { transferJournalLayer } from "../../src/store/transferJournal.ts"
import { Bandwidth } from "../../src/transfer/Bandwidth.ts"
import { makeProgressTracker, ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { TransferEngine } from "../../src/transfer/TransferEngine.ts"
import { nodeTransferFs, TransferFs } from "../../src/transfer/TransferFs.ts"
import { LinkError, TransferLinks } from "../../src/transfer/TransferLinks.ts"
import { transferOptions } from "../../src/transfer/TransferOptions.ts"
import { TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { jsonFileJournalLayer } from "./jsonFileJournal.ts"

export interface DlsyncJob {
  readonly linkBase: string
  readonly bearer: string
  readonly root: string
  readonly journal: string
  /** Remote ids (paths under nginx's root) and sizes. */
  readonly files: ReadonlyArray<{ readonly id: string; readonly size: number }>
  readonly options: Record<string, number>
  readonly progress?: boolean
  /** The store's SQLite journal (in `<journal>.d/`) instead of the JSON-file one. */
  readonly sqliteJournal?: boolean
  /** Diagnostic only: skip every fsync, to measure what durability costs. */
  readonly noFsync?: boolean
}

const job: DlsyncJob = JSON.parse(process.argv[2] ?? "{}")

const getLink = (fileId: string) =>
  Effect.tryPromise({
    try: async () => {
      const res = await request(`${job.linkBase}/files/${encodeURIComponent(fileId)}/download-link`, {
        method: "POST",
        headers: { authorization: `Bearer ${job.bearer}` }
      })
      const body: { url: string; expires_at: string } = JSON.parse(await res.body.text())
      return { url: body.url, expiresAt: new Date(body.expires_at) }
    },
    catch: (e) => new LinkError({ fileId, reason: "unavailable", message: String(e) })
  })

const progress = makeProgressTracker()
const options = transferOptions({ min_free_space: 0, ...job.options })
const layer = TransferQueue.layer(options).pipe(
  Layer.provideMerge(TransferEngine.layer(options)),
  Layer.provide([
    job.sqliteJournal === true
      ? transferJournalLayer.pipe(Layer.provide(Layer.orDie(Database.layer(`${job.journal}.d`))))
      : jsonFileJournalLayer(job.journal),
    job.noFsync === true
      ? Layer.succeed(
          TransferFs,
          TransferFs.of({
            ...nodeTransferFs,
            fdatasync: (_fd, cb) => cb(null),
            fsync: async () => {},
            fsyncDir: async () => {}
          })
        )
      : TransferFs.layer,
    Layer.succeed(TransferLinks, TransferLinks.of({ getLink })),
    Bandwidth.unlimited,
    Layer.succeed(ProgressTracker, ProgressTracker.of(progress))
  ])
)

const program = Effect.gen(function* () {
  const queue = yield* TransferQueue
  let timer: NodeJS.Timeout | undefined
  if (job.progress === true) {
    timer = setInterval(() => {
      process.stdout.write(`progress ${progress.snapshot(Date.now()).overall.done}\n`)
    }, 20)
  }
  // Peak RSS during the transfers (sampled), apart from the startup's module-loading peak.
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 50)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const results = yield* Effect.forEach(
    job.files,
    (f) =>
      queue.submit({
        fileId: f.id,
        size: f.size,
        remoteMtime: new Date("2024-01-01T00:00:00Z"),
        root: job.root,
        finalPath: Path.join(job.root, "out", f.id)
      }),
    // Fed a little ahead of the queue's slots, as the mirror engine would.
    { concurrency: Math.max(4, 4 * (options.concurrency ?? 3)) }
  )
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  if (timer !== undefined) clearInterval(timer)
  clearInterval(sampler)
  peakRss = Math.max(peakRss, process.memoryUsage.rss())
  const failed = results.filter((r) => r._tag !== "Completed")
  process.stdout.write(
    `${JSON.stringify({
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      maxRssMB: peakRss / 2 ** 20,
      processMaxRssMB: process.resourceUsage().maxRSS / 1024,
      fetched: results.reduce((n, r) => n + (r._tag === "Completed" ? r.fetched : 0), 0),
      failed: failed.map((r) => JSON.stringify(r))
    })}\n`
  )
}).pipe(Effect.provide(layer))

Effect.runPromise(program).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(2)
  }
)
