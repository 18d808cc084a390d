/**
 * The floor of plain Node for the ZIP path, a whole process timed from outside as dlsync's
 * `run --once` is: what any Node 24 program pays here for the essential work, nothing of
 * dlsync (no Effect, no store, no plan, no checks of the paths; only dlsync's pure ZIP
 * reader, which does no I/O).
 *
 *   list the account (GET /files/changes, 100 a page, one after another as the cursor
 *   requires) ─► every archive's link at once (POST /files/zip, 100 files each) ─►
 *   `ARCHIVES_AT_ONCE` archives at a time: one GET of each through nginx (https,
 *   NODE_EXTRA_CA_CERTS) ─► each member: its name picks the file, its bytes CRC-32'd,
 *   gathered and written to a partial file in one positional write ─► every 64 files: futimes + fsync + close all at once, renames, one fsync of the folder
 *   (dlsync's landing batch, src/transfer/zip/landingBatch.ts)
 *
 *   node zipFloor.ts <api base url> <access token> <root>
 *
 * Prints nothing but failures; exits 1 when a file is missing or wrong.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Path from "node:path"
import { crc32 } from "node:zlib"
import { ZipStreamReader } from "../../src/transfer/zip/zipStreamReader.ts"

const [base = "", token = "", root = ""] = process.argv.slice(2)
const ARCHIVES_AT_ONCE = 3
const IDS_PER_ARCHIVE = 100
const BATCH = 64
const partialDir = Path.join(root, ".floor")
const agents = { http: new Http.Agent({ keepAlive: true }), https: new Https.Agent({ keepAlive: true }) }

interface Planned {
  readonly id: string
  readonly path: string
  readonly size: number
  readonly mtime: Date
}

const call = <A = void>(f: (cb: (e: Error | null, a?: A) => void) => void): Promise<A> =>
  new Promise((resolve, reject) => f((e, a) => (e === null ? resolve(a as A) : reject(e))))

/** One request; the response when its status is 200, else an error. */
const send = (url: string, method: string, body?: string): Promise<Http.IncomingMessage> =>
  new Promise((resolve, reject) => {
    const secure = url.startsWith("https:")
    const request = (secure ? Https : Http).request(url, {
      method,
      agent: secure ? agents.https : agents.http,
      headers: {
        ...(url.startsWith(base) ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      }
    })
    request.once("response", (response) => {
      if (response.statusCode === 200) return resolve(response)
      response.resume()
      reject(new Error(`${method} ${url}: HTTP ${response.statusCode}`))
    })
    request.once("error", reject)
    request.end(body)
  })

const json = async (url: string, method = "GET", body?: unknown): Promise<unknown> => {
  const response = await send(url, method, body === undefined ? undefined : JSON.stringify(body))
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString("utf8"))
}

interface Page {
  readonly data: ReadonlyArray<{
    id: string
    name: string
    type: string
    parent_id: string | null
    size_bytes?: number
    updated_at: string
  }>
  readonly meta: { has_more: boolean; next_cursor?: string }
}

/** Every file of the account, with its folder's name as the path (one level, as the bench's account). */
const list = async (): Promise<Array<Planned>> => {
  const items: Array<Page["data"][number]> = []
  let cursor: string | undefined
  do {
    const page = (await json(
      `${base}/files/changes?limit=100${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    )) as Page
    items.push(...page.data)
    cursor = page.meta.has_more ? page.meta.next_cursor : undefined
  } while (cursor !== undefined)
  const folders = new Map(items.filter((i) => i.type === "folder").map((f) => [f.id, f.name]))
  return items
    .filter((i) => i.type !== "folder")
    .map((i) => ({
      id: i.id,
      path: Path.join(i.parent_id === null ? "" : (folders.get(i.parent_id) ?? ""), i.name),
      size: i.size_bytes ?? 0,
      mtime: new Date(i.updated_at)
    }))
}

interface Written {
  readonly file: Planned
  readonly fd: number
  readonly partial: string
}

const folderFsync = (folder: string) => {
  const fd = Fs.openSync(folder, "r")
  try {
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
}

/** dlsync's landing batch: all made durable at once, renamed, one fsync of each folder. */
const landBatch = async (batch: ReadonlyArray<Written>): Promise<void> => {
  await Promise.all(
    batch.map(async ({ file, fd }) => {
      await call((cb) => Fs.futimes(fd, file.mtime, file.mtime, cb))
      await call((cb) => Fs.fsync(fd, cb))
      await call((cb) => Fs.close(fd, cb))
    })
  )
  const folders = new Set<string>()
  for (const { file, partial } of batch) {
    const final = Path.join(root, file.path)
    Fs.renameSync(partial, final)
    folders.add(Path.dirname(final))
  }
  for (const folder of folders) folderFsync(folder)
}

const failed: Array<string> = []

const linkOf = (files: ReadonlyArray<Planned>): Promise<{ data: { url: string } }> =>
  json(`${base}/files/zip`, "POST", { ids: files.map((f) => f.id) }) as Promise<{ data: { url: string } }>

const archive = async (files: ReadonlyArray<Planned>, asked: Promise<{ data: { url: string } }>): Promise<void> => {
  const byName = new Map(files.map((f) => [Path.basename(f.path), f]))
  const link = await asked
  const response = await send(link.data.url, "GET")
  const reader = new ZipStreamReader()
  let batch: Array<Written> = []
  let current: { file: Planned; chunks: Array<Buffer>; crc: number; size: number } | undefined
  const arrived = new Set<string>()
  const handle = async (): Promise<boolean> => {
    for (let event = reader.next(); event !== undefined; event = reader.next()) {
      switch (event._tag) {
        case "Member": {
          const file = byName.get(event.header.name)
          current = file === undefined ? undefined : { file, chunks: [], crc: 0, size: 0 }
          // A stored member's data is as long as the file (as dlsync tells its reader).
          if (file !== undefined && event.header.compressedSize === undefined) reader.expectCompressedSize(file.size)
          break
        }
        case "Data":
          if (current !== undefined) {
            current.crc = crc32(event.bytes, current.crc)
            current.size += event.bytes.length
            current.chunks.push(event.bytes)
          }
          break
        case "MemberEnd": {
          const member = current
          current = undefined
          if (member === undefined) break
          if (member.size !== member.file.size || event.crc >>> 0 !== member.crc >>> 0) {
            failed.push(`${member.file.path}: wrong size or CRC`)
            break
          }
          const partial = Path.join(partialDir, member.file.id)
          const fd = await call<number>((cb) => Fs.open(partial, "w", cb))
          await call<number>((cb) => Fs.writev(fd, member.chunks, 0, cb))
          arrived.add(member.file.id)
          batch.push({ file: member.file, fd, partial })
          if (batch.length >= BATCH) {
            const taken = batch
            batch = []
            await landBatch(taken)
          }
          break
        }
        case "End":
          return true
        case "Broken":
          throw new Error(event.reason)
      }
    }
    return false
  }
  for await (const chunk of response) {
    reader.push(chunk as Buffer)
    if (await handle()) break
  }
  reader.finish()
  await handle()
  await landBatch(batch)
  for (const f of files) if (!arrived.has(f.id)) failed.push(`${f.path}: not in the archive`)
}

const files = await list()
Fs.mkdirSync(partialDir, { recursive: true })
for (const dir of new Set(files.map((f) => Path.dirname(Path.join(root, f.path)))))
  Fs.mkdirSync(dir, { recursive: true })
const jobs: Array<ReadonlyArray<Planned>> = []
for (let at = 0; at < files.length; at += IDS_PER_ARCHIVE) jobs.push(files.slice(at, at + IDS_PER_ARCHIVE))
// Every archive's link asked for at once: no round trip to the service between archives.
const links = jobs.map((job) => {
  const asked = linkOf(job)
  asked.catch(() => undefined)
  return asked
})
let next = 0
await Promise.all(
  Array.from({ length: ARCHIVES_AT_ONCE }, async () => {
    while (next < jobs.length) {
      const index = next++
      const job = jobs[index]
      const link = links[index]
      if (job !== undefined && link !== undefined)
        await archive(job, link).catch((e: unknown) => void failed.push(String(e)))
    }
  })
)
Fs.rmSync(partialDir, { recursive: true, force: true })
agents.http.destroy()
agents.https.destroy()
if (failed.length > 0) {
  process.stderr.write(`zipFloor: ${failed.length} failed: ${failed.slice(0, 3).join("; ")}\n`)
  process.exit(1)
}
