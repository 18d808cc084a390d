import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  assignNames,
  foldName,
  idTag,
  MAX_NAME_BYTES,
  SHORT_NAME_BYTES,
  sanitizeName,
  shortName,
  utf8Length,
  withShortNames
} from "../../src/sync/names.ts"

const plain = { portable: false }
const portable = { portable: true }

/** The invariants of a sanitized component, checked for any input. */
const assertSafe = (name: string, isPortable: boolean) => {
  assert.isAbove(name.length, 0)
  assert.isAtMost(utf8Length(name), MAX_NAME_BYTES)
  assert.notInclude(name, "/")
  assert.notInclude(name, "\\")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point of the check
  assert.notMatch(name, /[\u0000-\u001f\u007f-\u009f]/)
  assert.notInclude(["", ".", ".."], name)
  assert.notMatch(name, /[. ]$/)
  assert.strictEqual(name, name.normalize("NFC"))
  assert.isTrue(name.isWellFormed())
  if (isPortable) {
    assert.notMatch(name, /[<>:"|?*]/)
    assert.notMatch(name.split(".")[0]!.trimEnd(), /^(con|prn|aux|nul|com\d|lpt\d)$/i)
  }
}

describe("sanitizeName", () => {
  it("neutralizes names that could leave the root or hide", () => {
    assert.strictEqual(sanitizeName("../../etc/passwd", plain), ".._.._etc_passwd")
    assert.strictEqual(sanitizeName("a\\b", plain), "a_b")
    assert.strictEqual(sanitizeName("x\u0000y\nz\u007f", plain), "x_y_z_")
    assert.strictEqual(sanitizeName(".", plain), "_")
    assert.strictEqual(sanitizeName("..", plain), "_")
    assert.strictEqual(sanitizeName("", plain), "_")
    assert.strictEqual(sanitizeName("name. . ", plain), "name")
    assert.strictEqual(sanitizeName(".hidden", plain), ".hidden")
    // Names that merely start with two dots are ordinary single components.
    assert.strictEqual(sanitizeName("..hidden", plain), "..hidden")
    assert.strictEqual(sanitizeName("...txt", plain), "...txt")
    assert.strictEqual(sanitizeName("../x", plain), ".._x")
  })

  it("normalizes to NFC and repairs lone surrogates", () => {
    assert.strictEqual(sanitizeName("e\u0301te\u0301", plain), "été")
    assert.strictEqual(sanitizeName("a\ud800b", plain), "a\ufffdb")
  })

  it("avoids Windows device names and reserved characters only when portable", () => {
    assert.strictEqual(sanitizeName("CON", portable), "_CON")
    assert.strictEqual(sanitizeName("lpt1.txt", portable), "_lpt1.txt")
    assert.strictEqual(sanitizeName("nul .tar.gz", portable), "_nul .tar.gz")
    assert.strictEqual(sanitizeName('a<b>:"c"|?*', portable), "a_b___c____")
    assert.strictEqual(sanitizeName("CON", plain), "CON")
    assert.strictEqual(sanitizeName("a:b", plain), "a:b")
    assert.strictEqual(sanitizeName("CONSOLE.txt", portable), "CONSOLE.txt")
  })

  it("shortens long names to 255 bytes, keeping the extension and whole code points", () => {
    const long = sanitizeName(`${"x".repeat(300)}.mkv`, plain)
    assert.strictEqual(utf8Length(long), 255)
    assert.isTrue(long.endsWith("x.mkv"))
    const emoji = sanitizeName(`${"😀".repeat(100)}.srt`, plain)
    assert.isAtMost(utf8Length(emoji), 255)
    assert.isTrue(emoji.endsWith("😀.srt"))
    assert.isTrue(emoji.isWellFormed())
  })

  it("always yields a safe component (property)", () => {
    const hostile = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 300 }),
      fc
        .array(fc.constantFrom(".", " ", "/", "\\", "\u0000", "CON", "a", "é", "😀", "\ud800", ":", "e\u0301"), {
          maxLength: 120
        })
        .map((parts) => parts.join(""))
    )
    fc.assert(
      fc.property(hostile, fc.boolean(), (raw, isPortable) => {
        const name = sanitizeName(raw, { portable: isPortable })
        assertSafe(name, isPortable)
        assert.strictEqual(sanitizeName(name, { portable: isPortable }), name, "idempotent")
      }),
      { numRuns: 100 }
    )
  })
})

describe("assignNames", () => {
  const options = { portable: false, caseInsensitive: false }

  it("gives the plain name to the oldest of colliding siblings and an id tag to the others", () => {
    const names = assignNames(
      [
        { id: "new", name: "Movie.mkv", createdAt: "2026-02-01T00:00:00Z" },
        { id: "old", name: "Movie.mkv", createdAt: "2026-01-01T00:00:00Z" },
        { id: "other", name: "Other.mkv", createdAt: "2026-03-01T00:00:00Z" }
      ],
      options
    )
    assert.strictEqual(names.get("old"), "Movie.mkv")
    assert.strictEqual(names.get("new"), `Movie [${idTag("new")}].mkv`)
    assert.strictEqual(names.get("other"), "Other.mkv")
  })

  it("treats names differing only in case as colliding when the file system ignores case", () => {
    const siblings = [
      { id: "1", name: "a.txt", createdAt: "2026-01-01T00:00:00Z" },
      { id: "2", name: "A.TXT", createdAt: "2026-01-02T00:00:00Z" }
    ]
    assert.strictEqual(assignNames(siblings, options).get("2"), "A.TXT")
    assert.strictEqual(assignNames(siblings, { ...options, caseInsensitive: true }).get("2"), `A [${idTag("2")}].TXT`)
  })

  it("keeps reserved names free", () => {
    const names = assignNames([{ id: "x", name: ".dlsync", createdAt: "" }], { ...options, reserved: [".dlsync"] })
    assert.strictEqual(names.get("x"), `.dlsync [${idTag("x")}]`)
  })

  const sibling = fc.record({
    id: fc.string({ minLength: 1, maxLength: 4 }),
    name: fc.constantFrom("a", "A", "a.mkv", "A.MKV", "b", "b.", "b ", "c/d", "c_d", "é", "e\u0301", ""),
    createdAt: fc.constantFrom("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "garbage")
  })
  const siblings = fc.uniqueArray(sibling, { selector: (s) => s.id, maxLength: 12 })

  it("gives distinct names whatever the order of arrival (property)", () => {
    fc.assert(
      fc.property(siblings, fc.boolean(), (list, caseInsensitive) => {
        const opts = { portable: false, caseInsensitive }
        const names = assignNames(list, opts)
        const folded = [...names.values()].map((n) => foldName(n, caseInsensitive))
        assert.strictEqual(new Set(folded).size, list.length)
        assert.deepStrictEqual(assignNames([...list].reverse(), opts), names)
      }),
      { numRuns: 200 }
    )
  })

  it("never renames a sibling because of an unrelated one coming, going or being renamed (property)", () => {
    fc.assert(
      fc.property(siblings, sibling, fc.boolean(), (list, other, caseInsensitive) => {
        const opts = { portable: false, caseInsensitive }
        const base = list.filter((s) => s.id !== other.id)
        const before = assignNames(base, opts)
        const after = assignNames([...base, other], opts)
        const otherKey = foldName(sanitizeName(other.name, opts), caseInsensitive)
        for (const s of base) {
          const mine = before.get(s.id)!
          const related =
            foldName(sanitizeName(s.name, opts), caseInsensitive) === otherKey ||
            foldName(mine, caseInsensitive) === otherKey
          if (!related) assert.strictEqual(after.get(s.id), mine, `${s.id} renamed by ${other.id}`)
        }
      }),
      { numRuns: 200 }
    )
  })
})

describe("withShortNames", () => {
  const options = { portable: false, caseInsensitive: true }
  const at = "2026-01-01T00:00:00Z"

  it("spells the chosen siblings `stem [tag].ext` within 64 bytes, the others unchanged", () => {
    const long = { id: "long", name: `${"Episode ".repeat(30)}.mkv`, createdAt: at }
    const dots = { id: "dots", name: "..hidden", createdAt: at }
    const names = assignNames([long, dots], options)
    const spelled = withShortNames(names, [long], options)
    assert.strictEqual(spelled.get("dots"), "..hidden")
    const short = spelled.get("long")!
    assert.strictEqual(short, shortName(sanitizeName(long.name, options), idTag("long")))
    assert.match(short, /^Episode .* \[[0-9a-f]{6}\]\.mkv$/)
    assert.isAtMost(utf8Length(short), SHORT_NAME_BYTES)
  })

  it("keeps siblings distinct and within SHORT_NAME_BYTES, whatever is shortened (property)", () => {
    const name = fc.oneof(
      fc.constantFrom("..hidden", "...txt", "../x", "a.mkv", "A.MKV"),
      fc.string({ unit: "grapheme", minLength: 60, maxLength: 300 })
    )
    const list = fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 4 }), name }), {
      selector: (s) => s.id,
      maxLength: 12
    })
    fc.assert(
      fc.property(list, fc.array(fc.boolean()), (records, picks) => {
        const siblings = records.map((r) => ({ ...r, createdAt: at }))
        const names = assignNames(siblings, { ...options, reserved: [".dlsync"] })
        const chosen = siblings.filter((_, i) => picks[i] === true)
        const spelled = withShortNames(names, chosen, { ...options, reserved: [".dlsync"] })
        const folded = [...spelled.values()].map((n) => foldName(n, true))
        assert.strictEqual(new Set(folded).size, siblings.length)
        assert.notInclude(folded, ".dlsync")
        for (const s of chosen) {
          assertSafe(spelled.get(s.id)!, false)
          assert.isAtMost(utf8Length(spelled.get(s.id)!), SHORT_NAME_BYTES)
        }
      }),
      { numRuns: 200 }
    )
  })
})
