/**
 * The configuration's problems as a person reads them: each names its key and where it was
 * set, says what to write instead where that is known (a mistyped key's likely name, a
 * number or boolean written in quotes), and the list follows the file's line order.
 */
import { Predicate, SchemaIssue } from "effect"
import type { ConfigProblem } from "./ConfigError.ts"
import { type Origins, sourceOf, suggest } from "./configSources.ts"
import { type Field, isSecretField, sectionNames, sections, tableArrays } from "./fields.ts"

/** The schema's failure, one problem per key, in line order. */
export const describeIssue = (issue: SchemaIssue.Issue, values: unknown, origins: Origins): Array<ConfigProblem> =>
  inLineOrder(
    formatter(issue).issues.map((i) => {
      const path = (i.path ?? []).map((p) => String(Predicate.isObject(p) && "key" in p ? p.key : p))
      const key = path.join(".")
      const source = sourceOf(key, origins)
      if (i.message === "Expected no excess property") return { key, message: unknownKey(path), source }
      if (i.message === "Missing key") return { key, message: "required key is missing", source }
      // A secret's value is never shown, whatever its type: only what was expected.
      if (isSecretField(path)) return { key, message: `${withoutValue(i.message)} (the value is not shown)`, source }
      const value = path.reduce<unknown>((v, k) => (Predicate.hasProperty(v, k) ? v[k] : undefined), values)
      const showValue = value !== undefined && !i.message.includes(", got ")
      const message = showValue
        ? `${i.message}, got ${JSON.stringify(value)}${unquoteHint(i.message, value)}`
        : i.message
      return { key, message, source }
    })
  )

/** Problems sorted by their line in the file; those set in the environment (no line) after them, as found. */
export const inLineOrder = <P extends { readonly source: string }>(problems: ReadonlyArray<P>): Array<P> =>
  problems
    .map((problem, index) => ({ problem, index, line: lineOf(problem.source) }))
    .sort((a, b) => a.line - b.line || a.index - b.index)
    .map(({ problem }) => problem)

// ---------------------------------------------------------------------------------------

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** Each section's keys, and each array of tables' (`[[hooks]]`): what a mistyped key is compared with. */
const sectionKeys: Readonly<Record<string, Readonly<Record<string, Field>>>> = sections
const entryKeys: Readonly<Record<string, Readonly<Record<string, Field>>>> = tableArrays

/** "unknown key", with the known key it most likely stands for. */
const unknownKey = (path: ReadonlyArray<string>): string => {
  const name = path.at(-1) ?? ""
  const suggestion = suggest(name, knownKeysBeside(path))
  return suggestion === undefined ? "unknown key" : `unknown key; did you mean ${suggestion}?`
}

/** The keys that may stand where `path` points: its section's, or the section names. */
const knownKeysBeside = (path: ReadonlyArray<string>): ReadonlyArray<string> => {
  const [section = "", second, third] = path
  if (path.length === 1) return [...sectionNames, ...Object.keys(tableArrays), "categories"]
  const entry = Object.hasOwn(entryKeys, section) ? entryKeys[section] : undefined
  if (entry !== undefined && third !== undefined && /^\d+$/.test(second ?? "")) return Object.keys(entry)
  if (section === "categories" && third !== undefined) return ["selection", "cached_only"]
  return Object.hasOwn(sectionKeys, section) ? Object.keys(sectionKeys[section] ?? {}) : []
}

/** A number or boolean written as text: how to write it. */
const unquoteHint = (message: string, value: unknown): string => {
  if (!Predicate.isString(value)) return ""
  const text = value.trim()
  if (/^Expected (number|integer|an integer)/.test(message) && /^-?\d+(\.\d+)?$/.test(text)) {
    return ` (write ${text} without quotes)`
  }
  if (/^Expected boolean/.test(message) && /^(true|false)$/.test(text)) return ` (write ${text} without quotes)`
  return ""
}

/** A schema message without the value it quotes ("Expected string, got [...]" → "Expected string"). */
const withoutValue = (message: string): string => message.split(/,? got /)[0] ?? "invalid value"

/** The line of a `file:line` source; a source without one sorts last. */
const lineOf = (source: string): number => {
  const match = /:(\d+)$/.exec(source)
  return match === null ? Number.MAX_SAFE_INTEGER : Number(match[1])
}
