/**
 * The `--library` spec of the emulator (library.ts generates the library), apart so that
 * the command line checks it without loading the emulator.
 */

export type LibrarySpec =
  | { readonly kind: "empty" }
  | { readonly kind: "demo" }
  | { readonly kind: "generated"; readonly files: number; readonly depth: number }

/** Parses `demo`, `empty` or `files=N[,depth=D]`; throws RangeError with a usage message. */
export const parseLibrarySpec = (text: string): LibrarySpec => {
  const spec = text.trim()
  if (spec === "demo") return { kind: "demo" }
  if (spec === "empty" || spec === "") return { kind: "empty" }
  const fields = new Map<string, string>()
  for (const part of spec.split(",")) {
    const [key, value, extra] = part.split("=").map((s) => s.trim())
    if (key === undefined || value === undefined || extra !== undefined || !/^\d+$/.test(value)) {
      throw new RangeError(`invalid library spec "${text}": use demo, empty or files=N,depth=D`)
    }
    fields.set(key, value)
  }
  const unknown = [...fields.keys()].filter((key) => key !== "files" && key !== "depth")
  const files = Number(fields.get("files"))
  const depth = Number(fields.get("depth") ?? "2")
  if (unknown.length > 0 || !Number.isSafeInteger(files) || files > 5_000_000 || depth < 0 || depth > 32) {
    throw new RangeError(`invalid library spec "${text}": use demo, empty or files=N (≤ 5,000,000),depth=D (0..32)`)
  }
  return { kind: "generated", files, depth }
}
