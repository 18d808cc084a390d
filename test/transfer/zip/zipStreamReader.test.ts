import { crc32, inflateRawSync } from "node:zlib"
import fc from "fast-check"
import { assert, describe, it } from "vitest"
import { planZip, type ZipEntry, type ZipOptions } from "../../../src/emulator/zip.ts"
import { type MemberHeader, type ZipEvent, ZipStreamReader } from "../../../src/transfer/zip/zipStreamReader.ts"

interface ReadMember {
  readonly header: MemberHeader
  readonly data: Buffer
  readonly end: Extract<ZipEvent, { _tag: "MemberEnd" }>
}

/**
 * Feeds `archive` in the given chunk sizes and reads every event, as the ZIP job does:
 * after a Member with unknown sizes it says where the data should end (`expected`).
 */
const readAll = (archive: Buffer, cuts: ReadonlyArray<number>, expected: (name: string) => number | undefined) => {
  const reader = new ZipStreamReader()
  const members: Array<ReadMember> = []
  let current: { header: MemberHeader; chunks: Array<Buffer> } | undefined
  let last: ZipEvent | undefined
  const drain = () => {
    for (let event = reader.next(); event !== undefined; event = reader.next()) {
      last = event
      if (event._tag === "Member") {
        current = { header: event.header, chunks: [] }
        const size = expected(event.header.name)
        // A stored member's compressed size is its size; a deflated one's is not known.
        if (event.header.compressedSize === undefined && event.header.method === 0 && size !== undefined) {
          reader.expectCompressedSize(size)
        }
      } else if (event._tag === "Data") current?.chunks.push(Buffer.from(event.bytes))
      else if (event._tag === "MemberEnd" && current !== undefined) {
        members.push({ header: current.header, data: Buffer.concat(current.chunks), end: event })
        current = undefined
      }
    }
  }
  let at = 0
  for (const cut of cuts) {
    if (at >= archive.length) break
    reader.push(archive.subarray(at, at + cut))
    at += cut
    drain()
  }
  if (at < archive.length) reader.push(archive.subarray(at))
  reader.finish()
  drain()
  assert.isTrue(reader.done, "the reader ends with End or Broken")
  return { members, last }
}

const write = async (entries: ReadonlyArray<ZipEntry>, options: ZipOptions): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  await planZip(entries, options).stream(async (chunk) => {
    chunks.push(chunk)
    return true
  })
  return Buffer.concat(chunks)
}

const fromBytes = (name: string, bytes: Buffer): ZipEntry => ({
  name,
  size: bytes.length,
  modifiedMs: Date.UTC(2025, 0, 1),
  read: async (offset, buffer) => {
    bytes.copy(buffer, 0, offset, offset + buffer.length)
  }
})

/** A member's content: random, or full of what a data descriptor looks like (a trap for the search). */
const content = fc.oneof(
  fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
  fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 5 })).map(([length, repeat]) => {
    const trap = Buffer.alloc(16)
    trap.writeUInt32LE(0x08074b50, 0)
    trap.writeUInt32LE(0, 4)
    trap.writeUInt32LE(length, 8)
    trap.writeUInt32LE(length, 12)
    return Buffer.concat([
      Buffer.alloc(length, 7),
      ...Array.from({ length: repeat }, () => trap),
      Buffer.from("PK\x03\x04")
    ])
  })
)

const options = fc.record({
  forceZip64: fc.boolean(),
  method: fc.constantFrom("stored" as const, "deflate" as const),
  descriptor: fc.boolean(),
  descriptorSignature: fc.boolean()
})

describe("ZipStreamReader", () => {
  it("reads back every member the emulator's writer wrote, in any chunking, stored or deflated, ZIP64 or not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.tuple(
            fc.string({ minLength: 1, maxLength: 12 }).filter((n) => !n.endsWith("/")),
            content
          ),
          {
            maxLength: 6,
            selector: ([name]) => name
          }
        ),
        options,
        fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 40 }),
        async (files, opts, cuts) => {
          const archive = await write(
            files.map(([name, bytes]) => fromBytes(name, bytes)),
            opts
          )
          const sizes = new Map(files.map(([name, bytes]) => [name, bytes.length]))
          const { members, last } = readAll(archive, cuts, (name) => sizes.get(name))
          // A deflated member's descriptor without its signature cannot be found: its
          // compressed size is unknown to the consumer. Everything else must read back.
          const unreadable = opts.method === "deflate" && opts.descriptor && !opts.descriptorSignature
          if (unreadable && files.length > 0) {
            assert.strictEqual(last?._tag, "Broken")
            return
          }
          assert.strictEqual(last?._tag, "End")
          assert.strictEqual(members.length, files.length)
          files.forEach(([name, bytes], i) => {
            const member = members[i]!
            assert.strictEqual(member.header.name, name)
            const data = member.header.method === 8 ? inflateRawSync(member.data) : member.data
            assert.isTrue(data.equals(bytes), `${name}: the bytes read back`)
            assert.strictEqual(member.end.size, bytes.length)
            assert.strictEqual(member.end.compressedSize, member.data.length)
            assert.strictEqual(member.end.crc, crc32(bytes))
            assert.strictEqual(member.header.descriptor, opts.descriptor)
          })
        }
      ),
      { numRuns: 300 }
    )
  })

  it("never throws, always ends, and never hands out more data than it was given, whatever the bytes", async () => {
    const sample = await write(
      [fromBytes("a", Buffer.from("hello hello hello")), fromBytes("b", Buffer.alloc(300, 1))],
      { method: "deflate" }
    )
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
          // The sample archive with bytes changed, dropped or cut short.
          fc.array(fc.tuple(fc.nat(sample.length - 1), fc.nat(255)), { maxLength: 8 }).map((edits) => {
            const copy = Buffer.from(sample)
            for (const [at, value] of edits) copy[at] = value
            return copy
          }),
          fc.nat(sample.length).map((n) => sample.subarray(0, n))
        ),
        fc.array(fc.integer({ min: 1, max: 97 }), { maxLength: 30 }),
        (bytes, cuts) => {
          const reader = new ZipStreamReader()
          let data = 0
          let events = 0
          const drain = () => {
            for (let e = reader.next(); e !== undefined; e = reader.next()) {
              events++
              if (e._tag === "Data") data += e.bytes.length
            }
          }
          let at = 0
          for (const cut of cuts) {
            reader.push(bytes.subarray(at, at + cut))
            at += cut
            drain()
          }
          reader.push(bytes.subarray(at))
          reader.finish()
          drain()
          assert.isTrue(reader.done)
          assert.isAtMost(data, bytes.length)
          assert.isAtMost(events, bytes.length * 3 + 2)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("reports hostile names as they are (they only select a planned item), encryption and unknown methods", async () => {
    const names = ["../x", "/etc/passwd", "a\\b\\..\\c", "nul\u0000name", "x".repeat(65_535), "C:\\win"]
    const archive = await write(
      names.map((name) => fromBytes(name, Buffer.from("data"))),
      {}
    )
    const { members, last } = readAll(archive, [4096], () => 4)
    assert.strictEqual(last?._tag, "End")
    assert.deepStrictEqual(
      members.map((m) => m.header.name),
      names
    )
    // Flags and method as the header says: bit 0 is encryption, 12 is bzip2.
    const odd = Buffer.from(archive)
    odd.writeUInt16LE(odd.readUInt16LE(6) | 1, 6)
    odd.writeUInt16LE(12, 8)
    const first = readAll(odd, [], () => 4).members[0]!
    assert.isTrue(first.header.encrypted)
    assert.strictEqual(first.header.method, 12)
    assert.strictEqual(first.data.toString(), "data", "its data is still found, to be skipped")
  })

  it("is Broken on a record it does not know, and on an archive cut inside a member", async () => {
    const archive = await write([fromBytes("a", Buffer.alloc(100, 3))], {})
    assert.deepInclude(readAll(Buffer.concat([Buffer.from("GARBAGE!"), archive]), [], () => 100).last, {
      _tag: "Broken"
    })
    const cut = readAll(archive.subarray(0, 60), [], () => 100)
    assert.strictEqual(cut.last?._tag, "Broken")
    assert.lengthOf(cut.members, 0)
  })

  it("a member longer than expected is read to its end; one shorter than expected breaks the rest", async () => {
    const archive = await write([fromBytes("a", Buffer.alloc(100, 1)), fromBytes("b", Buffer.alloc(10, 2))], {})
    const longer = readAll(archive, [33], (name) => (name === "a" ? 60 : 10))
    assert.strictEqual(longer.last?._tag, "End")
    assert.deepStrictEqual(
      longer.members.map((m) => m.data.length),
      [100, 10]
    )
    const shorter = readAll(archive, [33], (name) => (name === "a" ? 160 : 10))
    assert.strictEqual(shorter.last?._tag, "Broken")
    assert.lengthOf(shorter.members, 0)
  })

  it("finds the descriptor of a stored member by its size when the data holds decoys", async () => {
    // A decoy descriptor that declares the right length but is followed by no ZIP record.
    const decoy = Buffer.alloc(20)
    decoy.writeUInt32LE(0x08074b50, 0)
    decoy.writeUInt32LE(8, 8)
    decoy.writeUInt32LE(8, 12)
    const bytes = Buffer.concat([Buffer.alloc(8, 1), decoy, Buffer.alloc(50, 2)])
    for (const descriptorSignature of [true, false]) {
      const archive = await write([fromBytes("m", bytes)], { descriptorSignature })
      const { members, last } = readAll(archive, [1, 1, 1, 5, 7], () => bytes.length)
      assert.strictEqual(last?._tag, "End")
      assert.isTrue(members[0]?.data.equals(bytes))
    }
  })
})
