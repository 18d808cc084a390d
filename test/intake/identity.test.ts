import { createHash } from "node:crypto"
import { hash as torrentHash } from "@ctrl/torrent-file"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { identify, MAX_MAGNET_LENGTH, MAX_NAME_BYTES, MAX_TRACKERS, MAX_URL_LENGTH } from "../../src/intake/identity.ts"
import { bencode } from "./bencode.ts"

const infoDict = {
  name: "Show.S01E01.1080p",
  "piece length": 16384,
  pieces: Buffer.alloc(20, 7),
  files: [
    { length: 1000, path: ["Show.S01E01.1080p.mkv"] },
    { length: 20, path: ["Subs", "en.srt"] }
  ]
}
const torrentBytes = bencode({ announce: "http://tracker.example/announce", info: infoDict })
const infoSha1 = createHash("sha1").update(bencode(infoDict)).digest("hex")

const ok = (source: Parameters<typeof identify>[0]) => {
  const result = identify(source)
  if (Result.isFailure(result)) throw new Error(result.failure.problem)
  return result.success
}
const problem = (source: Parameters<typeof identify>[0]) => {
  const result = identify(source)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${result.success.id}`)
  return result.failure
}

describe("identify", () => {
  it("a .torrent is the SHA-1 of its info dictionary, as @ctrl/torrent-file and a hand computation agree", () => {
    const id = ok({ _tag: "TorrentFile", fileName: "x.torrent", content: torrentBytes })
    expect(torrentHash(torrentBytes)).toBe(infoSha1)
    expect(id.id).toBe(`btih:${infoSha1}`)
    expect(id.name).toBe("Show.S01E01.1080p")
    expect(id.infoHash).toBe(infoSha1)
  })

  it("a magnet's hex, base32 and uppercase forms give one identity; dn is the name", () => {
    const hex = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
    const base32 = Buffer.from(hex, "hex")
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    let bits = ""
    for (const byte of base32) bits += byte.toString(2).padStart(8, "0")
    const b32 =
      bits
        .match(/.{5}/g)
        ?.map((b) => alphabet[Number.parseInt(b, 2)])
        .join("") ?? ""
    expect(b32).toHaveLength(32)
    const a = ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${hex}&dn=Some.Movie.2024&tr=udp%3A%2F%2Ft.example%3A80` })
    const b = ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${b32}` })
    const c = ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${hex.toUpperCase()}&dn=x` })
    expect(a.id).toBe(`btih:${hex}`)
    expect(b.id).toBe(a.id)
    expect(c.id).toBe(a.id)
    expect(a.name).toBe("Some.Movie.2024")
    expect(b.name).toBe(hex)
  })

  it("a v2-only magnet is its SHA-256 truncated to 40 hex; a hybrid one its v1 hash", () => {
    const v2 = "a".repeat(8) + "0123456789abcdef".repeat(3) + "b".repeat(8)
    expect(v2).toHaveLength(64)
    expect(ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btmh:1220${v2}&dn=v2` }).id).toBe(`btih:${v2.slice(0, 40)}`)
    const v1 = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
    expect(ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btmh:1220${v2}&xt=urn:btih:${v1}` }).id).toBe(`btih:${v1}`)
  })

  it("an NZB is the SHA-256 of its bytes, named after its file", () => {
    const nzb = Buffer.from(
      '<?xml version="1.0"?>\n<nzb xmlns="http://www.newzbin.com/DTD/2003/nzb"><file subject="a"/></nzb>'
    )
    const id = ok({ _tag: "NzbFile", fileName: "Show.S01E02.nzb", content: nzb })
    expect(id.id).toBe(`sha256:${createHash("sha256").update(nzb).digest("hex")}`)
    expect(id.name).toBe("Show.S01E02")
    expect(id.infoHash).toBeNull()
  })

  it("a URL is the SHA-256 of its normalized form (case of scheme and host, default port, fragment)", () => {
    const a = ok({ _tag: "Url", url: "HTTPS://Files.Example.com:443/a/Movie%20One.mkv#frag" })
    const b = ok({ _tag: "Url", url: "https://files.example.com/a/Movie%20One.mkv" })
    expect(a.id).toBe(b.id)
    expect(a.id).toBe(
      `sha256:${createHash("sha256").update("https://files.example.com/a/Movie%20One.mkv").digest("hex")}`
    )
    expect(a.name).toBe("Movie One.mkv")
  })

  it("what cannot be read is one clear problem", () => {
    expect(problem({ _tag: "TorrentFile", fileName: "bad.torrent", content: Buffer.from("hello") }).problem).toBe(
      "bad.torrent: not a torrent file (no bencoded info dictionary)"
    )
    expect(problem({ _tag: "Magnet", uri: "magnet:?dn=nothing" }).problem).toMatch(/no xt=urn:btih/)
    expect(problem({ _tag: "Magnet", uri: "magnet:?xt=urn:btih:zzzz" }).reason).toBe("invalid")
    expect(problem({ _tag: "NzbFile", fileName: "a.nzb", content: Buffer.from("nope") }).problem).toBe(
      "a.nzb: not an NZB file (no <nzb> element)"
    )
    expect(problem({ _tag: "Url", url: "ftp://x/y" }).problem).toBe("not an http(s) URL: ftp://x/y")
  })

  describe("caps that no real release meets, each refusal naming its limit", () => {
    const HASH = "c12fe1c06bba254a9dc9f519b335aa7c1367a88a"
    const tracker = (i: number) => `&tr=${encodeURIComponent(`udp://tracker${i}.example.org:1337/announce`)}`

    it("a real release passes: a 255-byte name, a multi-byte one, a magnet with 200 trackers", () => {
      const name = `Show.Name.S01E01.${"A".repeat(255 - 17)}`
      expect(ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}&dn=${name}` }).name).toBe(name)
      const japanese = "進撃の巨人".repeat(60)
      expect(ok({ _tag: "NzbFile", fileName: `${japanese}.nzb`, content: Buffer.from("<nzb></nzb>") }).name).toBe(
        japanese
      )
      const many = Array.from({ length: 200 }, (_, i) => tracker(i)).join("")
      expect(ok({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}&dn=x${many}` }).id).toBe(`btih:${HASH}`)
    })

    it("a name over MAX_NAME_BYTES: from a magnet's dn, a .torrent, an NZB's file name, a URL", () => {
      const long = "N".repeat(MAX_NAME_BYTES + 1)
      const sources: ReadonlyArray<Parameters<typeof identify>[0]> = [
        { _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}&dn=${long}` },
        { _tag: "TorrentFile", fileName: "x.torrent", content: bencode({ info: { ...infoDict, name: long } }) },
        { _tag: "NzbFile", fileName: `${long}.nzb`, content: Buffer.from("<nzb></nzb>") },
        { _tag: "Url", url: `https://indexer.example/get/${long}` }
      ]
      for (const source of sources) {
        const failure = problem(source)
        expect(failure.reason).toBe("invalid")
        expect(failure.problem).toContain(`longer than ${MAX_NAME_BYTES} bytes`)
        expect(failure.problem.length).toBeLessThan(400)
      }
    })

    it("a magnet of a megabyte, or with more than MAX_TRACKERS trackers, is refused in one short line", () => {
      const huge = problem({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}&dn=${"x".repeat(1024 * 1024)}` })
      expect(huge.reason).toBe("invalid")
      expect(huge.problem).toContain(`longer than ${MAX_MAGNET_LENGTH} characters`)
      expect(huge.problem.length).toBeLessThan(400)
      const trackers = Array.from({ length: 10_000 }, (_, i) => tracker(i)).join("")
      expect(problem({ _tag: "Magnet", uri: `magnet:?xt=urn:btih:${HASH}${trackers}` }).reason).toBe("invalid")
      const swarm = problem({
        _tag: "Magnet",
        uri: `magnet:?xt=urn:btih:${HASH}${Array.from({ length: MAX_TRACKERS + 1 }, (_, i) => `&tr=udp://t${i}`).join("")}`
      })
      expect(swarm.problem).toContain(`more than ${MAX_TRACKERS} trackers`)
    })

    it("a URL over MAX_URL_LENGTH, and what a refusal quotes of the input is short", () => {
      const url = problem({ _tag: "Url", url: `https://indexer.example/get?q=${"q".repeat(MAX_URL_LENGTH)}` })
      expect(url.problem).toContain(`longer than ${MAX_URL_LENGTH} characters`)
      const notUrl = problem({ _tag: "Url", url: `not a url ${"z".repeat(1024 * 1024)}` })
      expect(notUrl.problem.length).toBeLessThan(400)
    })
  })
})
