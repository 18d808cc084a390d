/**
 * The configuration's problems as a person reads them: each names its key and where it was set.
 */
import { Predicate, SchemaIssue } from "effect"
import type { ConfigProblem } from "./ConfigError.ts"
import { type Origins, sourceOf } from "./configSources.ts"
import { isSecretField } from "./fields.ts"

/** The schema's failure, one problem per key, in line order. */
export const describeIssue = (issue: SchemaIssue.Issue, values: unknown, origins: Origins): Array<ConfigProblem> =>
  inLineOrder(
    formatter(issue).issues.map((i) => {
      const path = (i.path ?? []).map((p) => String(Predicate.isObject(p) && "key" in p ? p.key : p))
      const key = path.join(".")
      const source = sourceOf(key, origins)
      if (i.message === "Expected no excess property") return { key, message: "unknown key", source }
      if (i.message === "Missing key") return { key, message: "required key is missing", source }
      // A secret's value is never shown, whatever its type: only what was expected.
      if (isSecretField(path)) return { key, message: `${withoutValue(i.message)} (the value is not shown)`, source }
      const value = path.reduce<unknown>((v, k) => (Predicate.hasProperty(v, k) ? v[k] : undefined), values)
      const showValue = value !== undefined && !i.message.includes(", got ")
      const message = showValue ? `${i.message}, got ${JSON.stringify(value)}` : i.message
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

/** A schema message without the value it quotes ("Expected string, got [...]" → "Expected string"). */
const withoutValue = (message: string): string => message.split(/,? got /)[0] ?? "invalid value"

/** The line of a `file:line` source; a source without one sorts last. */
const lineOf = (source: string): number => {
  const match = /:(\d+)$/.exec(source)
  return match === null ? Number.MAX_SAFE_INTEGER : Number(match[1])
}
