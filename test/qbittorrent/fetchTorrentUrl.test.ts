/**
 * torrents/add `urls=https://…`: the .torrent behind a link, fetched over real HTTP through
 * the outbound client: its bytes, an indexer's redirect to a magnet link, and one line for
 * what is not a .torrent or is too large.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fetchTorrentUrl, MAX_TORRENT_BYTES } from "../../src/qbittorrent/fetchTorrentUrl.ts"
import { bencode } from "../intake/bencode.ts"

const TORRENT = bencode({ info: { name: "Show", length: 1, "piece length": 16384, pieces: Buffer.alloc(20) } })
const MAGNET = "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=Show"

const indexer = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
        const server = Http.createServer((req, res) => {
          if (req.url === "/get/1?apikey=k") res.writeHead(200).end(TORRENT)
          else if (req.url === "/prowlarr/2") res.writeHead(302, { location: "/get/magnet" }).end()
          else if (req.url === "/get/magnet") res.writeHead(301, { location: MAGNET }).end()
          else if (req.url === "/huge") res.writeHead(200, { "content-length": String(MAX_TORRENT_BYTES + 1) }).end()
          else res.writeHead(200).end("<html>login</html>")
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
  ),
  (s) => Effect.sync(() => s.close())
)

describe("fetchTorrentUrl", () => {
  it.live("a .torrent link gives its bytes; a redirect to a magnet link gives the magnet", () =>
    Effect.gen(function* () {
      const { url } = yield* indexer
      const torrent = yield* fetchTorrentUrl(`${url}/get/1?apikey=k`)
      assert.strictEqual(torrent._tag, "TorrentFile")
      if (torrent._tag === "TorrentFile") assert.isTrue(Buffer.from(torrent.content).equals(TORRENT))
      assert.deepStrictEqual(yield* fetchTorrentUrl(`${url}/prowlarr/2`), { _tag: "Magnet", uri: MAGNET })
    })
  )

  it.live("what is not a .torrent, or is too large, is one line without the link's query", () =>
    Effect.gen(function* () {
      const { url } = yield* indexer
      assert.strictEqual(
        yield* Effect.flip(fetchTorrentUrl(`${url}/page?apikey=s3cret`)),
        `${url}/page is not a .torrent file`
      )
      const huge = yield* Effect.flip(fetchTorrentUrl(`${url}/huge`))
      assert.include(huge, `cannot fetch ${url}/huge: the answer is larger than ${MAX_TORRENT_BYTES} bytes`)
    })
  )
})
