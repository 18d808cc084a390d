/**
 * A tiny durable transfer journal in one JSON file, for the SIGKILL tests and the
 * benchmarks until the store's SQLite journal is wired: each save writes a temp file,
 * fsyncs it, renames it over the journal and fsyncs the directory, so a crash leaves
 * the previous journal or the new one.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Effect, Layer, Option } from "effect"
import { TransferJournal, type TransferRecord } from "../../src/transfer/TransferJournal.ts"

export const jsonFileJournal = (file: string): TransferJournal["Service"] => {
  // Saves run one at a time, off the event loop (the byte path must not stall behind fsync).
  let chain: Promise<unknown> = Promise.resolve()
  const serial = <A>(f: () => Promise<A>): Promise<A> => {
    const next = chain.then(f, f)
    chain = next.catch(() => undefined)
    return next
  }
  const read = async (): Promise<Record<string, TransferRecord>> => {
    try {
      return JSON.parse(await Fs.promises.readFile(file, "utf8"))
    } catch (e) {
      if (e instanceof Error && "code" in e && e.code === "ENOENT") return {}
      throw e
    }
  }
  const write = async (all: Record<string, TransferRecord>) => {
    const tmp = `${file}.tmp`
    const handle = await Fs.promises.open(tmp, "w")
    try {
      await handle.writeFile(JSON.stringify(all))
      await handle.sync()
    } finally {
      await handle.close()
    }
    await Fs.promises.rename(tmp, file)
    const dir = await Fs.promises.open(Path.dirname(file), "r")
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }
  const update = (f: (all: Record<string, TransferRecord>) => boolean) =>
    Effect.promise(() =>
      serial(async () => {
        const all = await read()
        if (f(all)) await write(all)
      })
    )
  return TransferJournal.of({
    // A load needs no turn: the file is only ever replaced whole by rename.
    load: (fileId) => Effect.promise(read).pipe(Effect.map((all) => Option.fromNullishOr(all[fileId]))),
    save: (record) =>
      update((all) => {
        all[record.fileId] = record
        return true
      }),
    remove: (fileId) =>
      update((all) => {
        if (!(fileId in all)) return false
        delete all[fileId]
        return true
      })
  })
}

export const jsonFileJournalLayer = (file: string) => Layer.succeed(TransferJournal, jsonFileJournal(file))
