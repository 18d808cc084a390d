/** Reading Node's file-system errors. */

/** The errno code of a Node error (`ENOENT`, `EEXIST`, …), if any. */
export const errnoCode = (e: unknown): string | undefined =>
  e instanceof Error && "code" in e && typeof e.code === "string" ? e.code : undefined

/** A short description of a thrown value, for error messages. */
export const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))
