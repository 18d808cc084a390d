/**
 * Real .torrent files for tests: a bencoded v1 metainfo with a single file or a folder of
 * files (the pieces are placeholders; the info-hash is what matters), and its info-hash as
 * the apps compute it (SHA-1 of the bencoded info dictionary).
 */
import { createHash } from "node:crypto"

type Bencodable = number | string | Uint8Array | ReadonlyArray<Bencodable> | { readonly [key: string]: Bencodable }

export const bencode = (value: Bencodable): Buffer => {
  if (typeof value === "number") return Buffer.from(`i${Math.trunc(value)}e`)
  if (typeof value === "string") return bencode(Buffer.from(value, "utf8"))
  if (value instanceof Uint8Array) return Buffer.concat([Buffer.from(`${value.length}:`), value])
  if (Array.isArray(value)) return Buffer.concat([Buffer.from("l"), ...value.map(bencode), Buffer.from("e")])
  const dict = value as { readonly [key: string]: Bencodable }
  const keys = Object.keys(dict).sort()
  return Buffer.concat([Buffer.from("d"), ...keys.flatMap((k) => [bencode(k), bencode(dict[k]!)]), Buffer.from("e")])
}

export interface TorrentFixture {
  readonly content: Uint8Array<ArrayBuffer>
  /** v1 info-hash, 40 lowercase hex digits. */
  readonly hash: string
}

/** A torrent named `name`: one file of `files[0].size` when `files` is omitted, else a folder. */
export const makeTorrent = (
  name: string,
  files?: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly size: number }>
): TorrentFixture => {
  const pieceLength = 16384
  const total = files === undefined ? 4096 : files.reduce((s, f) => s + f.size, 0)
  const pieces = Buffer.alloc(20 * Math.max(1, Math.ceil(total / pieceLength)), 1)
  const info =
    files === undefined
      ? { name, length: 4096, "piece length": pieceLength, pieces }
      : { name, files: files.map((f) => ({ length: f.size, path: [...f.path] })), "piece length": pieceLength, pieces }
  const encodedInfo = bencode(info)
  return {
    content: new Uint8Array(bencode({ announce: "http://tracker.invalid/announce", info })),
    hash: createHash("sha1").update(encodedInfo).digest("hex")
  }
}
