/**
 * The name a file has inside a service's archive, as dlsync compares it: a member is the
 * planned file whose name this is, and nothing else of the member's name is used (the path
 * a file lands at is the plan's). "/" and "\" separate folders in archives, so a service
 * must replace them in a file's own name: both sides are compared with them as "_", and in
 * Unicode's composed form.
 */
export const archiveNameOf = (name: string): string => name.normalize("NFC").replaceAll(/[/\\]/g, "_")
