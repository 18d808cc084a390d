/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests: it throws
 * on anything a Prometheus server would refuse, and on the conventions dlsync keeps
 * (every family has HELP and TYPE, counters end in _total).
 *
 * Checked: line grammar; metric and label name syntax; label value escapes (only \\, \"
 * and \n); HELP escapes; at most one HELP and one TYPE per family, before its samples;
 * samples of a family contiguous; no duplicate series; values are floats (or NaN, ±Inf);
 * the text ends with a newline; a histogram's buckets carry `le`, are cumulative and end in
 * +Inf, which equals its _count.
 */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  help: string | undefined
  type: string | undefined
  readonly samples: Array<Sample>
}

export const parsePrometheusText = (text: string): ReadonlyMap<string, Family> => {
  const families = new Map<string, Family>()
  if (text === "") return families
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline")
  const series = new Set<string>()
  let current: string | undefined
  const lines = text.slice(0, -1).split("\n")
  lines.forEach((line, index) => {
    const at = `line ${index + 1} (${JSON.stringify(line)})`
    if (line.trim() === "") return
    if (line.startsWith("#")) {
      const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
      if (meta === null) {
        if (/^# (HELP|TYPE)\b/.test(line)) throw new Error(`${at}: malformed ${line.slice(2, 6)}`)
        return // a plain comment
      }
      const [, kind, name, rest] = meta
      const family = enter(families, name!, at)
      if (family.samples.length > 0) throw new Error(`${at}: ${kind} after samples of ${name}`)
      if (kind === "HELP") {
        if (family.help !== undefined) throw new Error(`${at}: second HELP for ${name}`)
        family.help = unescapeText(rest!, HELP_ESCAPES, at)
      } else {
        if (family.type !== undefined) throw new Error(`${at}: second TYPE for ${name}`)
        if (!TYPES.has(rest!)) throw new Error(`${at}: unknown type ${rest}`)
        family.type = rest!
      }
      current = name
      return
    }
    const sample = parseSample(line, at)
    const familyName = familyOf(sample.name, families)
    if (familyName !== current) {
      if (families.get(familyName)?.samples.length) throw new Error(`${at}: samples of ${familyName} not contiguous`)
      current = familyName
    }
    const family = families.get(familyName) ?? enter(families, familyName, at)
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`
    if (series.has(key)) throw new Error(`${at}: duplicate series`)
    series.add(key)
    family.samples.push(sample)
  })
  for (const family of families.values()) {
    if (family.help === undefined) throw new Error(`${family.name}: no HELP`)
    if (family.type === undefined) throw new Error(`${family.name}: no TYPE`)
    if (family.type === "counter" && !family.name.endsWith("_total")) {
      throw new Error(`${family.name}: a counter's name should end in _total`)
    }
    if (family.type === "counter" && family.samples.some((s) => s.value < 0)) {
      throw new Error(`${family.name}: negative counter`)
    }
    if (family.type === "histogram") checkHistogram(family)
  }
  return families
}

/** The value of the one sample of `name` whose labels are exactly `labels`. */
export const sampleValue = (
  families: ReadonlyMap<string, Family>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number | undefined => {
  const wanted = JSON.stringify(Object.entries(labels).sort())
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted) return sample.value
    }
  }
  return undefined
}

const checkHistogram = (family: Family): void => {
  const buckets = family.samples.filter((s) => s.name === `${family.name}_bucket`)
  if (buckets.some((b) => b.labels.le === undefined)) throw new Error(`${family.name}: a bucket without le`)
  const bounds = buckets.map((b) => parseValue(b.labels.le ?? "", family.name))
  for (let i = 1; i < buckets.length; i++) {
    if (!(bounds[i]! > bounds[i - 1]!) || buckets[i]!.value < buckets[i - 1]!.value) {
      throw new Error(`${family.name}: buckets not cumulative in increasing le`)
    }
  }
  const inf = buckets.at(-1)
  if (inf === undefined || bounds.at(-1) !== Number.POSITIVE_INFINITY) throw new Error(`${family.name}: no +Inf bucket`)
  const count = family.samples.find((s) => s.name === `${family.name}_count`)
  if (count?.value !== inf.value) throw new Error(`${family.name}: _count differs from the +Inf bucket`)
}

const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"])
const HELP_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\", n: "\n" }
const LABEL_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\", n: "\n", '"': '"' }

const enter = (families: Map<string, Family>, name: string, at: string): Family => {
  const existing = families.get(name)
  if (existing !== undefined) return existing
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`${at}: bad metric name ${name}`)
  const family: Family = { name, help: undefined, type: undefined, samples: [] }
  families.set(name, family)
  return family
}

/** Histogram and summary samples (_bucket, _sum, _count) belong to their base family. */
const familyOf = (sampleName: string, families: ReadonlyMap<string, Family>): string => {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = sampleName.slice(0, -suffix.length)
    const type = families.get(base)?.type
    if (sampleName.endsWith(suffix) && (type === "histogram" || type === "summary")) return base
  }
  return sampleName
}

const parseSample = (line: string, at: string): Sample => {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)
  if (head === null) throw new Error(`${at}: bad metric name`)
  const name = head[1]!
  let position = name.length
  const labels: Record<string, string> = {}
  if (line[position] === "{") {
    position++
    while (line[position] !== "}") {
      const label = /([a-zA-Z_][a-zA-Z0-9_]*)="/y
      label.lastIndex = position
      const match = label.exec(line)
      if (match === null) throw new Error(`${at}: bad label at column ${position + 1}`)
      position = label.lastIndex
      let raw = ""
      while (line[position] !== '"') {
        if (position >= line.length) throw new Error(`${at}: unterminated label value`)
        if (line[position] === "\\") {
          raw += line.slice(position, position + 2)
          position += 2
        } else raw += line[position++]
      }
      position++
      if (match[1]! in labels) throw new Error(`${at}: duplicate label ${match[1]}`)
      labels[match[1]!] = unescapeText(raw, LABEL_ESCAPES, at)
      if (line[position] === ",") position++
      else if (line[position] !== "}") throw new Error(`${at}: expected , or } at column ${position + 1}`)
    }
    position++
  }
  const rest = /^ (\S+)(?: (-?\d+))?$/.exec(line.slice(position))
  if (rest === null) throw new Error(`${at}: expected " <value> [timestamp]"`)
  return { name, labels, value: parseValue(rest[1]!, at) }
}

const parseValue = (text: string, at: string): number => {
  if (text === "NaN") return Number.NaN
  if (text === "+Inf" || text === "Inf") return Number.POSITIVE_INFINITY
  if (text === "-Inf") return Number.NEGATIVE_INFINITY
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) throw new Error(`${at}: bad value ${text}`)
  return Number(text)
}

const unescapeText = (raw: string, escapes: Readonly<Record<string, string>>, at: string): string =>
  raw.replace(/\\(.?)/g, (_, c: string) => {
    const replacement = escapes[c]
    if (replacement === undefined) throw new Error(`${at}: bad escape \\${c}`)
    return replacement
  })
