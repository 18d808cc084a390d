/**
 * Whether a dropped file's bytes are a whole file of its kind, or may still be being
 * written (pure). A writer that pauses longer than the settle time leaves a file that has
 * kept its size but is cut short; what is cut short is recognised by its form:
 *
 * - a .torrent: a bencoded dictionary that is not closed when the bytes end;
 * - an .nzb: an XML document without its closing `</nzb>`;
 * - a .magnet, .url or .txt: no line end yet, and the one link it holds does not parse
 *   (a magnet cut inside its info-hash; Sonarr writes a magnet without a line end).
 *
 * Anything else is whole: what is whole but not a release (junk, a second line, a torrent
 * without info) is the intake's to refuse, at once.
 */
import { Result } from "effect"
import { identify } from "../intake/identity.ts"
import { type DropKind, sourceOf } from "./blackholeFiles.ts"

export type Wholeness = { readonly whole: true } | { readonly whole: false; readonly cut: string }

export const wholeness = (kind: DropKind, content: Uint8Array): Wholeness => {
  switch (kind) {
    case "torrent":
      return content[0] === D && bencodeEnd(content) === "short"
        ? { whole: false, cut: "its bencoded dictionary is not closed" }
        : WHOLE
    case "nzb": {
      const head = new TextDecoder().decode(content.subarray(0, 64))
      const tail = new TextDecoder().decode(content.subarray(-1024))
      return /^\s*</.test(head) && !/<\/nzb\s*>\s*$/i.test(tail)
        ? { whole: false, cut: "its XML has no closing </nzb>" }
        : WHOLE
    }
    case "magnet":
    case "link": {
      if (content.at(-1) === LF) return WHOLE
      const read = sourceOf(kind, "", content)
      if ("problem" in read) return WHOLE
      return Result.isSuccess(identify(read.source))
        ? WHOLE
        : { whole: false, cut: "its link does not parse whole and has no line end" }
    }
  }
}

/**
 * Where the bencoded value at the start of `bytes` ends (its length in bytes), "short" when
 * the bytes end inside it, "bad" when they are not bencode. Iterative: a file of nested
 * lists cannot exhaust the stack.
 */
export const bencodeEnd = (bytes: Uint8Array): number | "short" | "bad" => {
  let at = 0
  let depth = 0
  do {
    const c = bytes[at]
    if (c === undefined) return "short"
    if (c === D || c === L) {
      depth++
      at++
    } else if (c === E) {
      if (depth === 0) return "bad"
      depth--
      at++
    } else if (c === I) {
      const end = digitsEnd(bytes, at + 1 + (bytes[at + 1] === MINUS ? 1 : 0))
      if (end === bytes.length) return "short"
      if (bytes[end] !== E) return "bad"
      at = end + 1
    } else if (isDigit(c)) {
      const colon = digitsEnd(bytes, at)
      if (colon === bytes.length) return "short"
      if (bytes[colon] !== COLON) return "bad"
      at = colon + 1 + Number(new TextDecoder().decode(bytes.subarray(at, colon)))
      if (at > bytes.length) return "short"
    } else {
      return "bad"
    }
  } while (depth > 0)
  return at
}

// ---------------------------------------------------------------------------------------

const WHOLE: Wholeness = { whole: true }

const D = 0x64
const L = 0x6c
const E = 0x65
const I = 0x69
const COLON = 0x3a
const MINUS = 0x2d
const LF = 0x0a

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39

/** The index of the first byte from `at` that is not a digit (bytes.length when they all are). */
const digitsEnd = (bytes: Uint8Array, at: number): number => {
  let end = at
  while (end < bytes.length && isDigit(bytes[end])) end++
  return end
}
