/**
 * The identifier of a remote file or folder (opaque), branded from the API decoder to the
 * store and the disk: an id is never a plain string that could be any other text.
 */
import { Schema } from "effect"

export const FileId = Schema.String.pipe(Schema.brand("FileId"))
export type FileId = typeof FileId.Type
