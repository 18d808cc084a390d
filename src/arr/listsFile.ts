/**
 * Whether the app sees a file named `name` in `folder`, asked through its own file-system
 * lookup: GET filesystem?path=<folder>/&includeFiles=true (FileSystem/FileSystemController.cs
 * `GetContents`; NzbDrone.Common/Disk/FileSystemLookupService.cs lists the folder up to the
 * path's last separator, so the path ends with one, and answers empty lists for a folder it
 * cannot read or that does not exist).
 */
import { Effect } from "effect"
import type { Outbound } from "../outbound/Outbound.ts"
import type { ArrTarget } from "./ArrApp.ts"
import type { ArrError } from "./ArrError.ts"
import { asFolder } from "./appPaths.ts"
import { arrRequest } from "./arrRequest.ts"
import { FileSystemListing } from "./arrSchemas.ts"

export const listsFile = (
  target: ArrTarget,
  folder: string,
  name: string
): Effect.Effect<boolean, ArrError, Outbound> =>
  arrRequest(
    target,
    { method: "GET", path: "/filesystem", query: { path: asFolder(folder), includeFiles: "true" } },
    FileSystemListing
  ).pipe(Effect.map((listing) => (listing.files ?? []).some((f) => f.name === name)))
