/**
 * One dlsync benchmark run in its own process, driving the transfer engine and queue
 * directly with what `dlsync run` uses: the store's SQLite transfer journal, and links from
 * the service (here dlsync's emulator) through the real API client, authenticated with the
 * emulator's API key; the links point at nginx. run.ts bundles this file as the CLI ships
 * (scripts/build.ts) and runs the bundle. Prints one JSON line: wall seconds, CPU seconds
 * and peak RSS (sampled every 50 ms) of the transfer — process startup excluded, dlsync
 * being a daemon — plus the process's lifetime peak RSS, and the bytes fetched.
 * With `progress: true`, prints `progress <bytes>` lines every 20 ms (for the resume run).
 *   node dlsyncRun.mjs '<DlsyncJob JSON>'
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Layer, Redacted } from "effect"
import { ApiClient } from "../../src/api/ApiClient.ts"
import { ApiObserver } from "../../src/api/ApiHttp.ts"
import { Credentials } from "../../src/api/Credentials.ts"
import { FileId } from "../../src/domain/FileId.ts"
import { transferLinksLayer } from "../../src/engine/transferLinksLayer.ts"
import { Database } from "../../src/store/Database.ts"
import { Bandwidth } from "../../src/transfer/Bandwidth.ts"
import { makeProgressTracker, ProgressTracker } from "../../src/transfer/ProgressTracker.ts"
import { TransferEngine } from "../../src/transfer/TransferEngine.ts"
import { nodeTransferFs, TransferFs } from "../../src/transfer/TransferFs.ts"
import { TransferJournal } from "../../src/transfer/TransferJournal.ts"
import { type DownloadLink, TransferLinks } from "../../src/transfer/TransferLinks.ts"
import { transferOptions } from "../../src/transfer/TransferOptions.ts"
import { TransferQueue } from "../../src/transfer/TransferQueue.ts"
import { startSelfMeasure } from "./selfMeasure.ts"

export interface DlsyncJob {
  /** The service: the emulator's base_url, auth_url and personal API key. */
  readonly api: { readonly baseUrl: string; readonly authUrl: string; readonly apiKey: string }
  readonly root: string
  /** The SQLite journal's state directory. */
  readonly stateDir: string
  /** Remote ids (the emulator's), sizes, and where each lands under `<root>/out`. */
  readonly files: ReadonlyArray<{ readonly id: string; readonly path: string; readonly size: number }>
  readonly options: Record<string, number>
  readonly progress?: boolean
  /** Diagnostic only: skip every fsync, to measure what durability costs. */
  readonly noFsync?: boolean
  /** Diagnostic only: ask for every link first (timed apart), then transfer with them. */
  readonly linksFirst?: boolean
}

const job: DlsyncJob = JSON.parse(process.argv[2] ?? "{}")

/** TransferLinks over the API client: the layer `dlsync run` uses (src/engine/transferLinksLayer.ts). */
const apiLinks = transferLinksLayer.pipe(
  Layer.provide(ApiClient.layerLive({ baseUrl: job.api.baseUrl, authUrl: job.api.authUrl })),
  Layer.provide([Credentials.apiKey(Redacted.make(job.api.apiKey)), ApiObserver.none]),
  Layer.orDie
)

/** With `linksFirst`: every link asked for (and measured) while the layer is built, then served from memory. */
const links =
  job.linksFirst !== true
    ? apiLinks
    : Layer.effect(
        TransferLinks,
        Effect.gen(function* () {
          const service = yield* TransferLinks
          const cpu0 = process.cpuUsage()
          const t0 = performance.now()
          const all = new Map<string, DownloadLink>()
          yield* Effect.forEach(
            job.files,
            (f) => Effect.map(service.getLink(FileId.make(f.id)), (link) => void all.set(f.id, link)),
            { concurrency: 8, discard: true }
          )
          const cpu = process.cpuUsage(cpu0)
          process.stdout.write(
            `links ${JSON.stringify({ seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`
          )
          return TransferLinks.of({
            // Each link once; asked again (after a CDN refusal), the service answers.
            getLink: (id) =>
              Effect.suspend(() => {
                const link = all.get(id)
                all.delete(id)
                return link === undefined ? service.getLink(id) : Effect.succeed(link)
              })
          })
        })
      ).pipe(Layer.provide(apiLinks), Layer.orDie)

const progress = makeProgressTracker()
const options = transferOptions({ min_free_space: 0, ...job.options })
const layer = TransferQueue.layer(options).pipe(
  Layer.provideMerge(TransferEngine.layer(options)),
  Layer.provide([
    TransferJournal.layerDatabase.pipe(Layer.provide(Layer.orDie(Database.layer(job.stateDir)))),
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
    links,
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
  // The engine lands only into an existing folder (the mirror's plan makes folders first).
  for (const f of job.files) Fs.mkdirSync(Path.dirname(Path.join(job.root, "out", f.path)), { recursive: true })
  const measure = startSelfMeasure()
  const results = yield* Effect.forEach(
    job.files,
    (f) =>
      queue.submit({
        fileId: FileId.make(f.id),
        size: f.size,
        remoteMtime: new Date("2024-01-01T00:00:00Z"),
        root: job.root,
        path: `out/${f.path}`,
        replace: null
      }),
    // Fed a little ahead of the queue's slots, as the mirror engine would.
    { concurrency: Math.max(4, 4 * (options.concurrency ?? 3)) }
  )
  if (timer !== undefined) clearInterval(timer)
  measure.finish({
    processMaxRssMB: process.resourceUsage().maxRSS / 1024,
    fetched: results.reduce((n, r) => n + (r._tag === "Completed" ? r.fetched : 0), 0),
    failed: results.filter((r) => r._tag !== "Completed").map((r) => JSON.stringify(r))
  })
}).pipe(Effect.provide(layer))

Effect.runPromise(program).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(2)
  }
)
