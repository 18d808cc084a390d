/** A minimal bencoder (BEP 3) for tests: byte strings, integers, lists, dictionaries with sorted keys. */
export const bencode = (value: unknown): Buffer => {
  if (typeof value === "number") return Buffer.from(`i${value}e`)
  if (typeof value === "string" || value instanceof Uint8Array) {
    const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value)
    return Buffer.concat([Buffer.from(`${bytes.length}:`), bytes])
  }
  if (Array.isArray(value)) return Buffer.concat([Buffer.from("l"), ...value.map(bencode), Buffer.from("e")])
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))
  return Buffer.concat([Buffer.from("d"), ...entries.flatMap(([k, v]) => [bencode(k), bencode(v)]), Buffer.from("e")])
}
