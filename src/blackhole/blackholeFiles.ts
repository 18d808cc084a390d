/**
 * What a file dropped in a blackhole folder is, and where it goes afterwards: pure.
 *
 *   <watch>/<name>.{torrent,magnet,nzb,url,txt}              no category
 *   <watch>/<category>/<name>.{…}                             that category
 *   <watch>/processed/, <watch>/failed/ (+ <name>.reason.txt)  never read as input
 *
 * Hidden names (".x", editors' and downloaders' temporary files) and other extensions are
 * left alone. A `.url`/`.txt` holds one http(s) URL or magnet (a Windows `.url` shortcut's
 * `URL=` line counts); anything else is refused with a reason.
 */
import type { IntakeSource } from "../intake/Intake.ts"

export const PROCESSED_DIR = "processed"
export const FAILED_DIR = "failed"
export const REASON_SUFFIX = ".reason.txt"

export type DropKind = "torrent" | "magnet" | "nzb" | "link"

/** The kind of a dropped file by its name, or undefined for a name the blackhole leaves alone. */
export const dropKind = (name: string): DropKind | undefined => {
  if (name.startsWith(".")) return undefined
  const extension = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase()
  switch (extension) {
    case "torrent":
      return "torrent"
    case "magnet":
      return "magnet"
    case "nzb":
      return "nzb"
    case "url":
    case "txt":
      return name.toLowerCase().endsWith(REASON_SUFFIX) ? undefined : "link"
    default:
      return undefined
  }
}

/** Whether a sub-folder of the watch folder is a category folder (not processed/failed, not hidden). */
export const isCategoryFolder = (name: string): boolean =>
  name !== PROCESSED_DIR && name !== FAILED_DIR && !name.startsWith(".")

/** Why a category folder's name cannot be a category, or undefined when it can. */
export const categoryProblem = (name: string): string | undefined =>
  hasControl(name) ? `the folder name ${JSON.stringify(name)} holds control characters; rename the folder` : undefined

/** The intake source a dropped file stands for, or why it stands for none. */
export const sourceOf = (
  kind: DropKind,
  fileName: string,
  content: Uint8Array
): { readonly source: IntakeSource } | { readonly problem: string } => {
  switch (kind) {
    case "torrent":
      return { source: { _tag: "TorrentFile", fileName, content } }
    case "nzb":
      return { source: { _tag: "NzbFile", fileName, content } }
    case "magnet": {
      const link = oneLink(content)
      return "problem" in link
        ? link
        : link.uri.toLowerCase().startsWith("magnet:")
          ? { source: { _tag: "Magnet", uri: link.uri } }
          : { problem: "a .magnet file must hold a magnet: link" }
    }
    case "link": {
      const link = oneLink(content)
      if ("problem" in link) return link
      if (link.uri.toLowerCase().startsWith("magnet:")) return { source: { _tag: "Magnet", uri: link.uri } }
      if (/^https?:\/\/[^/\s]/i.test(link.uri) && URL.canParse(link.uri))
        return { source: { _tag: "Url", url: link.uri } }
      return { problem: "holds neither an http(s) URL nor a magnet: link" }
    }
  }
}

/** `name`, or `name (2)`, `name (3)`… before the extension: the `attempt`-th free name. */
export const numberedName = (name: string, attempt: number): string => {
  if (attempt <= 1) return name
  const dot = name.lastIndexOf(".")
  return dot > 0 ? `${name.slice(0, dot)} (${attempt})${name.slice(dot)}` : `${name} (${attempt})`
}

/** A reason as one line of text (no control characters, bounded). */
export const oneLine = (reason: string): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is taken out
  const line = reason.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return line.length > 1000 ? `${line.slice(0, 999)}…` : line
}

// ---------------------------------------------------------------------------------------

/** The one link a text holds: its one non-empty line, or a `URL=` line of a `.url` shortcut. */
const oneLink = (content: Uint8Array): { readonly uri: string } | { readonly problem: string } => {
  const lines = new TextDecoder()
    .decode(content)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
  const shortcut = lines.find((l) => /^URL=/i.test(l))
  if (shortcut !== undefined) return { uri: shortcut.slice(4).trim() }
  if (lines.length === 0) return { problem: "the file is empty" }
  if (lines.length > 1) return { problem: "the file holds more than one line; put one URL or magnet in each file" }
  return { uri: lines[0] ?? "" }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const hasControl = (text: string): boolean => /[\u0000-\u001f\u007f]/.test(text)
