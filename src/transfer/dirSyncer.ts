/**
 * Group commit for directory fsyncs. A finished file must be followed by an fsync of its
 * directory so the rename survives power loss; when many files land in one directory at
 * once (many small files), one fsync that *starts* after a rename covers it and every
 * rename before it. So a caller joins the next fsync to start, never one already running
 * (which may have begun before its rename): at most one running and one waiting per
 * directory, however many files complete.
 */
export const makeDirSyncer = (fsyncDir: (dir: string) => Promise<void>) => {
  const state = new Map<string, { current: Promise<void>; next: Promise<void> | null }>()

  const start = (dir: string): Promise<void> => {
    const current = fsyncDir(dir)
    const entry = state.get(dir)
    if (entry === undefined) state.set(dir, { current, next: null })
    else entry.current = current
    const cleanup = () => {
      const e = state.get(dir)
      if (e !== undefined && e.current === current && e.next === null) state.delete(dir)
    }
    current.then(cleanup, cleanup)
    return current
  }

  return {
    /** Resolves once an fsync of `dir` that started after this call has succeeded. */
    sync: (dir: string): Promise<void> => {
      const entry = state.get(dir)
      if (entry === undefined) return start(dir)
      entry.next ??= entry.current
        .then(
          () => undefined,
          () => undefined
        )
        .then(() => {
          entry.next = null
          return start(dir)
        })
      return entry.next
    }
  }
}
