/**
 * What landing small files costs a Node process, by how its system calls are made: the
 * same file steps (open, write 64 KiB, futimes, fsync, close, rename, an fsync of the
 * folder) for N files, no network. It is the file-system part of the small-file rows of
 * `npm run bench` (dlsync and its Node floor make these calls the first way), and shows
 * whether another way of making them would be faster.
 *
 *   node bench/fileSteps.ts [--files 2000] [--runs 5] [--no-fsync]
 *
 * Variants, each in its own process, alternating round by round (A B C D A B …):
 * - `thread pool, 8 at a time` — what dlsync and any Node program do: every file step an
 *   asynchronous call, 8 files in flight, then one synchronous fsync of the folder per file
 *   after its rename, as dlsync's landing does (src/fs/landFile.ts);
 * - `one synchronous loop` — the floor of the system calls: one file after another on the
 *   main thread, a folder fsync every 8 files (never a choice for a daemon: the event loop
 *   stalls on every fsync);
 * - `sync metadata, pool fsync` — open, write, futimes, close and rename synchronous on
 *   the main thread, the fsyncs asynchronous, folder fsyncs coalesced (dirSyncer.ts: one
 *   for the files renamed while the last ran);
 * - `batched I/O worker` — one worker thread takes the files that are ready in one message
 *   and lands them synchronously, with one folder fsync per batch.
 * Prints files/s and CPU seconds of the whole process (every thread): medians (min–max).
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { Worker } from "node:worker_threads"
import { fsyncDirSync } from "../src/fs/fsyncDir.ts"
import { makeDirSyncer } from "../src/transfer/dirSyncer.ts"
import { nodeTransferFs } from "../src/transfer/TransferFs.ts"
import { startSelfMeasure } from "./support/selfMeasure.ts"
import { fmt, stats, syncDisks } from "./support/tools.ts"

const { values: args } = parseArgs({
  options: {
    files: { type: "string", default: "2000" },
    runs: { type: "string", default: "5" },
    "no-fsync": { type: "boolean", default: false },
    variant: { type: "string" }
  }
})
const FILES = Number(args.files)
const FSYNC = args["no-fsync"] !== true
const DIR = "/tmp/dlsync-bench/file-steps"
const PARTIAL = Path.join(DIR, "partial")
const FINAL = Path.join(DIR, "final")
const SIZE = 64 * 1024
const IN_FLIGHT = 8

const VARIANTS = {
  "thread pool, 8 at a time": () => threadPool(),
  "one synchronous loop": () => syncLoop(),
  "sync metadata, pool fsync": () => syncMetadata(),
  "batched I/O worker": () => batchedWorker()
} as const
type Variant = keyof typeof VARIANTS

const call = <A = void>(f: (cb: (e: Error | null, a?: A) => void) => void): Promise<A> =>
  new Promise((resolve, reject) => f((e, a) => (e === null ? resolve(a as A) : reject(e))))

const body = (i: number) => Buffer.alloc(SIZE, i & 0xff)
const partialOf = (i: number) => Path.join(PARTIAL, String(i))
const finalOf = (i: number) => Path.join(FINAL, `${String(i).padStart(5, "0")}.bin`)
const MTIME = new Date("2024-01-01T00:00:00Z")

/** Runs `land` for every file, `IN_FLIGHT` at a time. */
const inFlight = async (land: (i: number) => Promise<void>): Promise<void> => {
  let next = 0
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < FILES) await land(next++)
    })
  )
}

const threadPool = () =>
  inFlight(async (i) => {
    const data = body(i)
    const fd = await call<number>((cb) => Fs.open(partialOf(i), "w", cb))
    await call<number>((cb) => Fs.write(fd, data, 0, data.length, 0, cb))
    await call((cb) => Fs.futimes(fd, MTIME, MTIME, cb))
    if (FSYNC) await call((cb) => Fs.fsync(fd, cb))
    await call((cb) => Fs.close(fd, cb))
    await call((cb) => Fs.rename(partialOf(i), finalOf(i), cb))
    if (FSYNC) fsyncDirSync(FINAL)
  })

const syncLoop = async () => {
  for (let i = 0; i < FILES; i++) {
    const data = body(i)
    const fd = Fs.openSync(partialOf(i), "w")
    Fs.writeSync(fd, data, 0, data.length, 0)
    Fs.futimesSync(fd, MTIME, MTIME)
    if (FSYNC) Fs.fsyncSync(fd)
    Fs.closeSync(fd)
    Fs.renameSync(partialOf(i), finalOf(i))
    if (FSYNC && (i % IN_FLIGHT === IN_FLIGHT - 1 || i === FILES - 1)) fsyncDirSync(FINAL)
  }
}

const syncMetadata = () => {
  const dirSync = makeDirSyncer(nodeTransferFs.fsyncDir)
  return inFlight(async (i) => {
    const data = body(i)
    const fd = Fs.openSync(partialOf(i), "w")
    Fs.writeSync(fd, data, 0, data.length, 0)
    Fs.futimesSync(fd, MTIME, MTIME)
    if (FSYNC) await call((cb) => Fs.fsync(fd, cb))
    Fs.closeSync(fd)
    Fs.renameSync(partialOf(i), finalOf(i))
    if (FSYNC) await dirSync.sync(FINAL)
  })
}

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads")
const Fs = require("node:fs")
const { fsync, final, mtime } = workerData
parentPort.on("message", (batch) => {
  for (const { partial, path, data } of batch) {
    const fd = Fs.openSync(partial, "w")
    Fs.writeSync(fd, data, 0, data.length, 0)
    Fs.futimesSync(fd, mtime, mtime)
    if (fsync) Fs.fsyncSync(fd)
    Fs.closeSync(fd)
    Fs.renameSync(partial, path)
  }
  if (fsync) {
    const fd = Fs.openSync(final, Fs.constants.O_RDONLY | Fs.constants.O_DIRECTORY)
    Fs.fsyncSync(fd)
    Fs.closeSync(fd)
  }
  parentPort.postMessage(batch.length)
})`

const batchedWorker = async () => {
  const worker = new Worker(WORKER, { eval: true, workerData: { fsync: FSYNC, final: FINAL, mtime: MTIME } })
  let queue: Array<{ partial: string; path: string; data: Buffer; done: () => void }> = []
  let busy: Array<() => void> | null = null
  const kick = () => {
    if (busy !== null || queue.length === 0) return
    const batch = queue
    queue = []
    busy = batch.map((f) => f.done)
    worker.postMessage(batch.map(({ partial, path, data }) => ({ partial, path, data })))
  }
  worker.on("message", () => {
    for (const done of busy ?? []) done()
    busy = null
    kick()
  })
  await inFlight(
    (i) =>
      new Promise<void>((done) => {
        queue.push({ partial: partialOf(i), path: finalOf(i), data: body(i), done })
        kick()
      })
  )
  await worker.terminate()
}

/** One variant in this process: prints its figures (support/selfMeasure.ts). */
const runVariant = async (variant: Variant) => {
  Fs.rmSync(DIR, { recursive: true, force: true })
  Fs.mkdirSync(PARTIAL, { recursive: true })
  Fs.mkdirSync(FINAL, { recursive: true })
  const measure = startSelfMeasure()
  await VARIANTS[variant]()
  measure.finish({})
  if (Fs.readdirSync(FINAL).length !== FILES) throw new Error(`${variant}: files missing`)
}

if (args.variant !== undefined) {
  await runVariant(args.variant as Variant)
} else {
  const names = Object.keys(VARIANTS) as Array<Variant>
  const results = new Map<Variant, Array<{ seconds: number; cpuSeconds: number }>>(names.map((n) => [n, []]))
  console.log(`${FILES} files of 64 KiB, ${FSYNC ? "with" : "without"} fsync, rounds: ${args.runs}`)
  for (let round = 0; round < Number(args.runs); round++) {
    for (const name of names) {
      syncDisks()
      const out = ChildProcess.execFileSync(
        process.execPath,
        [import.meta.filename, ...process.argv.slice(2), "--variant", name],
        {
          encoding: "utf8"
        }
      )
      results.get(name)?.push(JSON.parse(out.trim().split("\n").pop() ?? "{}"))
    }
  }
  Fs.rmSync(DIR, { recursive: true, force: true })
  console.log(`${"variant".padEnd(28)}${"files/s".padEnd(20)}CPU s`)
  for (const [name, ms] of results) {
    console.log(
      `${name.padEnd(28)}${fmt(stats(ms.map((m) => FILES / m.seconds))).padEnd(20)}${fmt(stats(ms.map((m) => m.cpuSeconds)), 2)}`
    )
  }
}
