/**
 * The parts of Sonarr's and Radarr's v3 API resources dlsync reads (unknown fields pass).
 * Sources, in Sonarr/Sonarr (Radarr/Radarr has the same files under Radarr.Api.V3):
 * - System/SystemController.cs `GetStatus`: `appName`, `version`;
 * - Sonarr.Http/PagingResource.cs: `page`, `pageSize`, `totalRecords`, `records`;
 * - Queue/QueueResource.cs: `id`, `downloadId` (the torrent's info-hash, uppercase), `title`;
 * - NzbDrone.Common/Disk/FileSystemResult.cs + FileSystemLookupService.cs: `parent`,
 *   `directories`, `files` (each `name`, `path`);
 * - RootFolders/RootFolderResource.cs: `path`;
 * - RemotePathMappings/RemotePathMappingResource.cs: `host`, `remotePath`, `localPath`;
 * - DownloadClient/DownloadClientResource.cs (ProviderResource.cs): `enable`,
 *   `implementation`, `fields[{name, value}]`.
 */
import { Schema } from "effect"

export const SystemStatus = Schema.Struct({ appName: Schema.String, version: Schema.String })
export type SystemStatus = typeof SystemStatus.Type

export const QueueRecord = Schema.Struct({
  id: Schema.Number,
  downloadId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  title: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type QueueRecord = typeof QueueRecord.Type

export const QueuePage = Schema.Struct({
  page: Schema.Number,
  pageSize: Schema.Number,
  totalRecords: Schema.Number,
  records: Schema.Array(QueueRecord)
})

const FileSystemEntry = Schema.Struct({ name: Schema.String, path: Schema.String })

export const FileSystemListing = Schema.Struct({
  directories: Schema.optionalKey(Schema.NullOr(Schema.Array(FileSystemEntry))),
  files: Schema.optionalKey(Schema.NullOr(Schema.Array(FileSystemEntry)))
})
export type FileSystemListing = typeof FileSystemListing.Type

export const RootFolders = Schema.Array(Schema.Struct({ path: Schema.String }))

export const RemotePathMappings = Schema.Array(
  Schema.Struct({ host: Schema.String, remotePath: Schema.String, localPath: Schema.String })
)
export type RemotePathMapping = (typeof RemotePathMappings.Type)[number]

export const DownloadClients = Schema.Array(
  Schema.Struct({
    enable: Schema.Boolean,
    implementation: Schema.String,
    fields: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.optionalKey(Schema.Unknown) }))
  })
)
export type DownloadClients = typeof DownloadClients.Type
