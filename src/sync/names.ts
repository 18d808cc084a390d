/**
 * Remote names → local names. Pure and deterministic.
 *
 * Invariants:
 * - `sanitizeName` returns one non-empty path component of at most 255 UTF-8 bytes, in NFC,
 *   well-formed, without `/`, `\`, NUL or control characters, not `.` or `..`, and not
 *   ending in a dot or a space. With `portable`, it also has none of `<>:"|?*` and is not
 *   a Windows device name (CON, NUL, COM1, LPT1 … with or without an extension).
 * - `assignNames` gives every sibling a distinct local name (distinct after case folding when
 *   the file system ignores case), and the name of an item depends only on its own name,
 *   id and creation time and on the siblings whose sanitized name collides with it:
 *   adding, removing or renaming an unrelated sibling never renames it.
 * - `withShortNames` keeps siblings distinct too; a short name is at most SHORT_NAME_BYTES and
 *   depends only on the item's own name and id (unless it collides, then on the colliders).
 */
import { createHash } from "node:crypto"

export const MAX_NAME_BYTES = 255

/**
 * The most a shortened name takes (tree.ts shortens the deepest names of a path that would
 * not fit PATH_MAX): enough for a recognizable start of the name, its id tag and extension.
 */
export const SHORT_NAME_BYTES = 64

export interface NameOptions {
  /** Also avoid what Windows and SMB shares refuse (mirror.portable_names). */
  readonly portable: boolean
}

export interface SiblingNameOptions extends NameOptions {
  /** The root's file system treats `A` and `a` as the same name. */
  readonly caseInsensitive: boolean
  /** Names that no item may take (e.g. `.dlsync` at the root); compared after folding. */
  readonly reserved?: ReadonlyArray<string>
}

export interface Sibling {
  readonly id: string
  readonly name: string
  readonly createdAt: string
}

/** One safe local path component for a remote name. */
export const sanitizeName = (raw: string, options: NameOptions): string => {
  let name = raw.toWellFormed().normalize("NFC").replace(UNSAFE_CHARS, "_")
  if (options.portable) name = name.replace(WINDOWS_RESERVED_CHARS, "_")
  name = stripTrailingDotsAndSpaces(name)
  if (name === "") return "_"
  if (options.portable && isWindowsDeviceName(name)) name = "_" + name
  const { stem, ext } = splitExtension(name)
  return fitName(stem, "", ext)
}

/**
 * The key under which two names are the same entry on the root's file system. A
 * case-sensitive file system compares names byte for byte (an NFD name found on disk is not
 * our NFC one); the case-insensitive ones we meet (APFS, NTFS, SMB) also ignore the
 * normalization form.
 */
export const foldName = (name: string, caseInsensitive: boolean): string =>
  caseInsensitive ? name.normalize("NFC").toLowerCase().normalize("NFC") : name

/** A short, stable tag derived from an item id (hex of its SHA-256). */
export const idTag = (id: string, length = 6): string => createHash("sha256").update(id).digest("hex").slice(0, length)

/** `stem [tag].ext`, shortened to 255 bytes while keeping the tag and the extension. */
export const withTag = (name: string, tag: string): string => withInfix(name, ` [${tag}]`)

/** `stem<infix>.ext`, shortened to 255 bytes while keeping the infix and the extension. */
export const withInfix = (name: string, infix: string): string => {
  const { stem, ext } = splitExtension(name)
  return fitName(stem, infix, ext)
}

/**
 * The short spelling of a sanitized name, for a path that would not fit otherwise:
 * `stem… [tag].ext` in at most SHORT_NAME_BYTES, with the tag convention of `withTag` (the
 * tag from the item's id keeps it unique among siblings and the same at every pass).
 */
export const shortName = (name: string, tag: string): string => {
  const { stem, ext } = splitExtension(name)
  return fitName(stem, ` [${tag}]`, ext, SHORT_NAME_BYTES)
}

/** Splits `a.b.mkv` into `a.b` and `.mkv`; a leading dot (`.hidden`) is not an extension. */
export const splitExtension = (name: string): { readonly stem: string; readonly ext: string } => {
  const dot = name.lastIndexOf(".")
  if (dot <= 0 || dot === name.length - 1) return { stem: name, ext: "" }
  const ext = name.slice(dot)
  if (utf8Length(ext) > MAX_EXTENSION_BYTES || /[\s]/.test(ext)) return { stem: name, ext: "" }
  return { stem: name.slice(0, dot), ext }
}

/**
 * Local names for the children of one folder, keyed by item id.
 *
 * Siblings whose sanitized names collide (after folding) form a group. The oldest member
 * (by created_at, then id) keeps the plain name; every other member gets `name [tag].ext`
 * with a tag derived from its own id. Why this choice:
 * - The common collision is a new download arriving with the name of an existing file; the
 *   file already on disk keeps its name, so no rename churn and no broken library paths.
 * - The outcome depends on the group's members only, never on the order in which the feed
 *   delivered them, so a restart or a rebuild yields the same names.
 * - Tagging every member instead would rename an existing file the moment a namesake
 *   appears. The remaining cost of our choice: when the oldest member leaves the folder, the
 *   next oldest takes the plain name (a rename caused by a colliding sibling, never by an
 *   unrelated one).
 * A tag that itself collides with another name grows (6 → 12 → 64 hex digits).
 */
export const assignNames = (siblings: ReadonlyArray<Sibling>, options: SiblingNameOptions): Map<string, string> => {
  const fold = (name: string) => foldName(name, options.caseInsensitive)
  const reserved = new Set((options.reserved ?? []).map(fold))
  const groups = new Map<string, Array<{ readonly sibling: Sibling; readonly name: string }>>()
  for (const sibling of siblings) {
    const name = sanitizeName(sibling.name, options)
    const key = fold(name)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [{ sibling, name }])
    else group.push({ sibling, name })
  }
  const result = new Map<string, string>()
  const tagged: Array<{ readonly id: string; readonly name: string }> = []
  const taken = new Set<string>()
  for (const [key, group] of groups) {
    group.sort((a, b) => compareAge(a.sibling, b.sibling))
    group.forEach((member, index) => {
      if (index === 0 && !reserved.has(key)) {
        result.set(member.sibling.id, member.name)
        taken.add(key)
      } else {
        tagged.push({ id: member.sibling.id, name: member.name })
      }
    })
  }
  tagged.sort((a, b) => compareStrings(a.id, b.id))
  for (const { id, name } of tagged) {
    let local = name
    for (const length of TAG_LENGTHS) {
      local = withTag(name, idTag(id, length))
      if (!taken.has(fold(local)) && !reserved.has(fold(local))) break
    }
    result.set(id, local)
    taken.add(fold(local))
  }
  return result
}

/**
 * `names` (from `assignNames`) with the children in `shortened` spelled short (`shortName`
 * of their sanitized name and id tag). The other children keep their names; a short name
 * that collides (after folding) with a sibling's or a reserved name takes a longer tag, so
 * siblings stay distinct and every name stays within SHORT_NAME_BYTES.
 */
export const withShortNames = (
  names: ReadonlyMap<string, string>,
  shortened: ReadonlyArray<Sibling>,
  options: SiblingNameOptions
): Map<string, string> => {
  const fold = (name: string) => foldName(name, options.caseInsensitive)
  const result = new Map(names)
  const short = new Set(shortened.map((s) => s.id))
  const taken = new Set((options.reserved ?? []).map(fold))
  for (const [id, name] of names) if (!short.has(id)) taken.add(fold(name))
  for (const sibling of [...shortened].sort((a, b) => compareStrings(a.id, b.id))) {
    const name = sanitizeName(sibling.name, options)
    let local = name
    for (const length of SHORT_TAG_LENGTHS) {
      local = shortName(name, idTag(sibling.id, length))
      if (!taken.has(fold(local))) break
    }
    result.set(sibling.id, local)
    taken.add(fold(local))
  }
  return result
}

/** The UTF-8 length of a string, in bytes. */
export const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8")

// ---------------------------------------------------------------------------------------

const MAX_EXTENSION_BYTES = 32
const TAG_LENGTHS = [6, 12, 64] as const
/** Short names grow their tag less far: ` [24 hex]` and a 32-byte extension fit SHORT_NAME_BYTES. */
const SHORT_TAG_LENGTHS = [6, 12, 24] as const

// C0 controls, DEL, C1 controls, and both path separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f/\\]/g
const WINDOWS_RESERVED_CHARS = /[<>:"|?*]/g
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i

const stripTrailingDotsAndSpaces = (s: string): string => s.replace(/[. ]+$/u, "")

const isWindowsDeviceName = (name: string): boolean => {
  const base = name.split(".")[0] ?? ""
  return WINDOWS_DEVICE.test(base.trimEnd())
}

/** Shortens `stem` (never splitting a code point) so that stem + tag + ext fits `max` bytes. */
const fitName = (stem: string, tag: string, ext: string, max = MAX_NAME_BYTES): string => {
  if (utf8Length(stem + tag + ext) <= max) return stem + tag + ext
  const budget = max - utf8Length(tag) - utf8Length(ext)
  let kept = ""
  let used = 0
  for (const codePoint of stem) {
    const size = utf8Length(codePoint)
    if (used + size > budget) break
    kept += codePoint
    used += size
  }
  kept = stripTrailingDotsAndSpaces(kept)
  return (kept === "" ? "_" : kept) + tag + ext
}

/** Older first; items whose created_at does not parse come after the others. */
const compareAge = (a: Sibling, b: Sibling): number => {
  const ta = Date.parse(a.createdAt)
  const tb = Date.parse(b.createdAt)
  const byValidity = Number(Number.isNaN(ta)) - Number(Number.isNaN(tb))
  if (byValidity !== 0) return byValidity
  const byTime = Number.isNaN(ta) ? 0 : ta - tb
  if (byTime !== 0) return byTime
  const byText = compareStrings(a.createdAt, b.createdAt)
  return byText !== 0 ? byText : compareStrings(a.id, b.id)
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
