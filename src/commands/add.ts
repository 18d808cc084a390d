/**
 * `dlsync add` (cli/add.ts): records releases in the intake queue, shared through SQLite with
 * a running daemon, and returns: the process holding the instance lock (`dlsync run`) sends
 * them, follows them and mirrors them into `<root>/<category>/`. One sender per state dir is
 * what makes the crash-safe send hold (a lookup by client_reference before any POST, never
 * two POSTs in flight for one intake), so `add` never sends itself, daemon or not; it says
 * which process will.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Console, Effect, Layer, Result, Schema } from "effect"
import { commandConfig } from "../cli/commandConfig.ts"
import { UsageError } from "../engine/EngineError.ts"
import { categoryProblem } from "../intake/categoryName.ts"
import { Intake, type IntakeSource } from "../intake/Intake.ts"
import { IntakeLive } from "../intake/IntakeLive.ts"
import { IntakeSettings } from "../intake/IntakeSettings.ts"
import { identify } from "../intake/identity.ts"
import { Database } from "../store/Database.ts"
import { liveLockHolder } from "../store/instanceLock.ts"
import { IntakeTables } from "../store/intakeTables.ts"
import { Store } from "../store/Store.ts"

/** Some arguments could not be added (each named above); exit 1. */
export class AddFailed extends Schema.TaggedError<AddFailed>()("AddFailed", { count: Schema.Int }) {
  override get message(): string {
    return `${this.count} argument(s) could not be added (see above)`
  }
}

export const add = Effect.fn("add")(function* ({
  sources,
  category
}: {
  readonly sources: ReadonlyArray<string>
  readonly category: string
}) {
  const problem = categoryProblem(category)
  if (problem !== undefined) return yield* new UsageError({ detail: problem })
  const config = yield* commandConfig
  const layer = IntakeLive.pipe(
    Layer.provide(Layer.merge(IntakeTables.layer, Store.layer)),
    Layer.provide(Database.layer(config.mirror.state_dir)),
    Layer.provide(IntakeSettings.fromConfig(config))
  )
  const where = category === "" ? "the mirror root" : `category ${category}`
  let failed = 0
  let added = 0
  yield* Effect.gen(function* () {
    const intake = yield* Intake
    for (const argument of sources) {
      const source = readSource(argument)
      if ("problem" in source) {
        failed++
        yield* Console.error(`cannot read ${argument}: ${source.problem}`)
        continue
      }
      const identified = identify(source)
      if (Result.isFailure(identified)) {
        failed++
        yield* Console.error(`cannot read ${argument}: ${withoutFileName(identified.failure.problem, source)}`)
        continue
      }
      const existing = yield* intake.list({ ids: [identified.success.id] })
      const item = yield* intake.add(source, { category, via: "cli" })
      const present = existing[0]
      if (present !== undefined) {
        yield* Console.log(
          `already present: ${present.name} (${present.id}) in ${present.category === "" ? "the mirror root" : `category ${present.category}`}, ${present.state}`
        )
      } else {
        added++
        yield* Console.log(`added ${item.name} (${item.id}) to ${where}`)
      }
    }
  }).pipe(
    Effect.catchTag("IntakeError", (error) => Effect.fail(new UsageError({ detail: error.problem }))),
    Effect.provide(layer)
  )
  if (added > 0) {
    const holder = liveLockHolder(config.mirror.state_dir)
    yield* Console.log(
      holder === undefined
        ? "no dlsync is running with this state dir: `dlsync run` sends and mirrors what was added"
        : `the running dlsync (pid ${holder}) sends and mirrors it`
    )
  }
  if (failed > 0) return yield* new AddFailed({ count: failed })
})

// ---------------------------------------------------------------------------------------

/** An argument as a source: a magnet or URL as given, else a file read and recognized by its name or content. */
const readSource = (argument: string): IntakeSource | { readonly problem: string } => {
  const text = argument.trim()
  if (/^magnet:/i.test(text)) return { _tag: "Magnet", uri: text }
  if (/^https?:\/\//i.test(text)) return { _tag: "Url", url: text }
  let content: Buffer
  try {
    content = Fs.readFileSync(argument)
  } catch (e) {
    const code = e instanceof Error && "code" in e ? String(e.code) : ""
    return {
      problem:
        code === "ENOENT"
          ? "no such file (give a magnet link, an http(s) URL, or a .torrent, .nzb, .magnet or .url file)"
          : code === "EISDIR"
            ? "a folder, not a file"
            : code === "EACCES"
              ? "permission denied"
              : e instanceof Error
                ? e.message
                : String(e)
    }
  }
  const fileName = NodePath.basename(argument)
  const lower = fileName.toLowerCase()
  if (lower.endsWith(".torrent")) return { _tag: "TorrentFile", fileName, content }
  if (lower.endsWith(".nzb")) return { _tag: "NzbFile", fileName, content }
  const head = content.subarray(0, 4096).toString("utf8")
  if (lower.endsWith(".magnet") || lower.endsWith(".url") || lower.endsWith(".txt")) {
    const line = head
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => /^(magnet:|https?:\/\/|URL=)/i.test(l))
    if (line === undefined) return { problem: "holds no magnet link or http(s) URL" }
    const value = line.replace(/^URL=/i, "")
    return /^magnet:/i.test(value) ? { _tag: "Magnet", uri: value } : { _tag: "Url", url: value }
  }
  if (head.startsWith("d") && head.includes("4:info")) return { _tag: "TorrentFile", fileName, content }
  if (/<nzb[\s>]/i.test(head)) return { _tag: "NzbFile", fileName, content }
  return { problem: "not a torrent file, an NZB, or a file holding a magnet link or URL" }
}

/** The identity's problem, without the file name the line already starts with. */
const withoutFileName = (problem: string, source: IntakeSource): string =>
  "fileName" in source && problem.startsWith(`${source.fileName}: `)
    ? problem.slice(source.fileName.length + 2)
    : problem
