/** The name dlsync keeps its own files under, at the root of the mirror. */
export const DLSYNC_DIR = ".dlsync"
