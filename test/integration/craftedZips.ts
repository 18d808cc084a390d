/**
 * A stand-in for the host of the service's archives, for the ZIP path's fault tests: the
 * emulator's ZIP links are pointed at it (`control.setZip({ base })`), and it answers each
 * `GET /zip/{token}/{name}` with the archive a test builds for the token's ids, written in
 * pieces the test may hold back (`gate`) to stop mid-archive.
 */
import * as Http from "node:http"
import { contentKey, fillContent } from "../../src/emulator/content.ts"
import type { RunningEmulator } from "../../src/emulator/server.ts"
import { decodeToken } from "../../src/emulator/signedToken.ts"
import { planZip, type ZipEntry, type ZipOptions } from "../../src/emulator/zip.ts"

export interface CraftedZips {
  /** The ids of every archive asked for, in order. */
  readonly asked: Array<ReadonlyArray<string>>
  close(): Promise<void>
}

/** What an archive is: its bytes, written up to `holdAt` and then only once `gate` resolves (if ever). */
export interface Crafted {
  readonly bytes: Buffer
  readonly holdAt?: number
  readonly gate?: Promise<void>
}

export const craftedZips = async (
  emu: RunningEmulator,
  build: (ids: ReadonlyArray<string>, asked: number) => Promise<Crafted>
): Promise<CraftedZips> => {
  const asked: Array<ReadonlyArray<string>> = []
  const server = Http.createServer((request, response) => {
    const token = (request.url ?? "").split("/")[2] ?? ""
    const raw = decodeToken(emu.state, "zip", token)?.ids
    const ids = Array.isArray(raw) ? raw.map(String) : []
    asked.push(ids)
    void build(ids, asked.length).then(
      async ({ bytes, holdAt, gate }) => {
        response.writeHead(200, { "Content-Type": "application/zip", "Content-Length": String(bytes.length) })
        const cut = holdAt ?? bytes.length
        response.write(bytes.subarray(0, cut))
        if (cut < bytes.length) {
          await gate
          response.end(bytes.subarray(cut))
        } else response.end()
      },
      // A test's own mistake: answered at once (the run then fails), not left hanging.
      (e: unknown) => {
        response.writeHead(500)
        response.end(String(e))
      }
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = address !== null && typeof address === "object" ? address.port : 0
  emu.control.setZip({ base: `http://127.0.0.1:${port}` })
  return {
    asked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A member with the bytes of the emulator's file `id` (as its CDN serves them), under its own name unless given. */
export const memberOf = (emu: RunningEmulator, id: string, overrides: Partial<ZipEntry> = {}): ZipEntry => {
  const item = emu.control.item(id)
  if (item === undefined) throw new Error(`no item ${id}`)
  const key = contentKey(item.id, item.contentVersion)
  return {
    name: item.name,
    size: item.sizeBytes,
    modifiedMs: Math.floor(item.contentModifiedAt / 1000),
    read: async (offset, buffer) => fillContent(key, offset, buffer),
    ...overrides
  }
}

export const archive = async (entries: ReadonlyArray<ZipEntry>, options: ZipOptions = {}): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  await planZip(entries, options).stream(async (chunk) => {
    chunks.push(chunk)
    return true
  })
  return Buffer.concat(chunks)
}

/** Offset of the local header of the member named `name` (its first occurrence in the archive). */
export const localHeaderOf = (bytes: Buffer, name: string): number => {
  const at = bytes.indexOf(Buffer.from(name, "utf8"))
  if (at < 30 || bytes.readUInt32LE(at - 30) !== 0x04034b50) throw new Error(`no local header for ${name}`)
  return at - 30
}
