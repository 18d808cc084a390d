/**
 * The floor of plain Node for dlsync's small-file work, as a diagnostic beside dlsync: what
 * a Node 24 process does without dlsync's engine (no Effect, no journal, no checks; only the
 * shared folder-fsync helper, so the landing ends as the engine's does).
 * Per file, 8 at a time: the link from the service (undici POST, the bearer, JSON.parse;
 * skipped with `links: false`, which GETs the emulator's link path on nginx directly),
 * the body with undici's `request` on a keep-alive pool, then the same durable landing as
 * dlsync's: open, write, futimes, fsync, close, rename onto the final path, and one
 * synchronous fsync of the folder per file, as dlsync's landing does (src/fs/landFile.ts).
 * Prints the runner's JSON line (dlsyncRun.ts), measured the same way.
 *   node nodeFloor.ts '<DlsyncJob JSON + { "links": boolean, "cdn": string }>'
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Agent, request } from "undici"
import { fsyncDirSync } from "../../src/fs/fsyncDir.ts"
import type { DlsyncJob } from "./dlsyncRun.ts"
import { startSelfMeasure } from "./selfMeasure.ts"

interface FloorJob extends DlsyncJob {
  readonly links: boolean
  /** nginx's base URL: with `links: false`, bodies come from `<cdn>/dl/<id>/file`. */
  readonly cdn: string
}

const job: FloorJob = JSON.parse(process.argv[2] ?? "{}")
const CONCURRENCY = 8
const agent = new Agent({ connections: 2 * CONCURRENCY })
const partialDir = Path.join(job.root, ".floor")
const mtime = new Date("2024-01-01T00:00:00Z")

const call = <A = void>(f: (cb: (e: Error | null, a?: A) => void) => void): Promise<A> =>
  new Promise((resolve, reject) => f((e, a) => (e === null ? resolve(a as A) : reject(e))))

const urlOf = async (id: string): Promise<string> => {
  if (!job.links) return `${job.cdn}/dl/${encodeURIComponent(id)}/file`
  const response = await request(`${job.api.baseUrl}/files/${encodeURIComponent(id)}/download-link`, {
    method: "POST",
    headers: { authorization: `Bearer ${job.api.apiKey}`, accept: "application/json" },
    dispatcher: agent
  })
  if (response.statusCode !== 200) throw new Error(`download-link: ${response.statusCode}`)
  return (JSON.parse(await response.body.text()) as { data: { url: string } }).data.url
}

const land = async (file: DlsyncJob["files"][number], index: number): Promise<void> => {
  const response = await request(await urlOf(file.id), { dispatcher: agent })
  if (response.statusCode !== 200) throw new Error(`GET: ${response.statusCode}`)
  const body = Buffer.from(await response.body.arrayBuffer())
  if (body.length !== file.size) throw new Error(`${file.path}: ${body.length} bytes, expected ${file.size}`)
  const partial = Path.join(partialDir, String(index))
  const final = Path.join(job.root, "out", file.path)
  const fd = await call<number>((cb) => Fs.open(partial, "w", cb))
  await call<number>((cb) => Fs.write(fd, body, 0, body.length, 0, cb))
  await call((cb) => Fs.futimes(fd, mtime, mtime, cb))
  await call((cb) => Fs.fsync(fd, cb))
  await call((cb) => Fs.close(fd, cb))
  await call((cb) => Fs.rename(partial, final, cb))
  fsyncDirSync(Path.dirname(final))
}

// Folders made before the clock starts, as dlsync's are known after its first file.
Fs.mkdirSync(partialDir, { recursive: true })
for (const dir of new Set(job.files.map((f) => Path.dirname(Path.join(job.root, "out", f.path))))) {
  Fs.mkdirSync(dir, { recursive: true })
}
const measure = startSelfMeasure()
let next = 0
const failed: Array<string> = []
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < job.files.length) {
      const index = next++
      const file = job.files[index]
      if (file !== undefined) await land(file, index).catch((e: unknown) => void failed.push(String(e)))
    }
  })
)
measure.finish({ failed })
await agent.close()
