/** Real-looking payloads of the service, for schema and operation tests. */
import { Schema } from "effect"
import { Cursor, DownloadId, FileId, SelectionId } from "../../src/api/schemas/common.ts"

export const fileRecord = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: "f_01HZX3K9M2",
  parent_id: "d_01HZX3K0AA",
  download_id: "dl_7781",
  name: "Big Buck Bunny (2008).mkv",
  type: "file",
  kind: "video",
  size_bytes: 734_003_200,
  mime_type: "video/x-matroska",
  locked: false,
  expires_at: "2026-12-01T00:00:00Z",
  created_at: "2026-11-01T10:00:00.123456Z",
  updated_at: "2026-11-02T11:30:00.654321Z",
  ...overrides
})

export const folderRecord = (overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  fileRecord({
    id: "d_01HZX3K0AA",
    parent_id: null,
    download_id: null,
    name: "Movies",
    type: "folder",
    kind: "folder",
    size_bytes: 0,
    mime_type: "inode/directory",
    ...overrides
  })

export const fullMedia = {
  status: "ready",
  title: "Big Buck Bunny",
  description: "",
  creation_time: "2008-05-20T00:00:00Z",
  format_names: ["matroska", "webm"],
  duration_ms: 596_474,
  bitrate: 9_842_000,
  width: 1920,
  height: 1080,
  chapters: [{ start_ms: 0, end_ms: 120_000, title: "Opening" }],
  video_streams: [
    {
      index: 0,
      codec: "h264",
      codec_tag: "avc1",
      profile: "High",
      level: 41,
      width: 1920,
      height: 1080,
      display_aspect_ratio: "16:9",
      sample_aspect_ratio: "1:1",
      pixel_format: "yuv420p",
      frame_rate: "24/1",
      bitrate: 9_500_000,
      color_range: "tv",
      color_space: "bt709",
      color_transfer: "bt709",
      color_primaries: "bt709",
      hdr: false,
      rotation: 0,
      default: true
    }
  ],
  audio_streams: [
    {
      index: 1,
      codec: "aac",
      profile: "LC",
      channels: 6,
      channel_layout: "5.1",
      sample_rate: 48_000,
      bitrate: 320_000,
      language: "eng",
      title: "Surround",
      default: true,
      original: true,
      commentary: false,
      hearing_impaired: false,
      visual_impaired: false
    }
  ],
  subtitle_streams: [
    {
      index: 2,
      codec: "subrip",
      language: "fra",
      title: "Français",
      default: false,
      forced: false,
      original: false,
      commentary: false,
      hearing_impaired: false
    }
  ]
}

export const poster = {
  url: "https://posters.example.test/ab/cd/abcdef.webp",
  expires_at: null,
  width: 640,
  height: 360,
  mime_type: "image/webp",
  dominant_color: "#1a2b3c"
}

export const appState = {
  value: { position_ms: 120_000, watched: false },
  version: 3,
  etag: '"st-9f2c"',
  created_at: "2026-11-01T10:00:00Z",
  updated_at: "2026-11-03T08:00:00Z"
}

export const account = {
  id: "u_42",
  name: "Ada",
  email: "ada@example.test",
  email_verified: true,
  created_at: "2025-01-02T03:04:05.678901Z",
  plan: { name: "Pro", expires_at: "2030-01-01T00:00:00.000000Z" },
  credits: { remaining: 1200 },
  limits: {
    daily_downloads: { limit: 100, remaining: 97, resets_at: "2026-11-23T00:00:00Z" },
    daily_download_bytes: { limit: 1_099_511_627_776, remaining: 1_000_000_000_000, resets_at: "2026-11-23T00:00:00Z" },
    max_file_size_bytes: 107_374_182_400,
    concurrent_downloads: 10,
    concurrent_torrents: null
  }
}

export const download = {
  id: "dl_7781",
  attempt: 1,
  status: "downloading",
  can_cancel: true,
  can_retry: false,
  file_id: null,
  activity: null,
  error: null,
  client_reference: "sonarr-123",
  webhook_url: null,
  directory: "/tv",
  progress: 0.42
}

export const selection = {
  id: "sel_1",
  expires_at: "2026-11-22T06:00:00Z",
  items: [
    { item_id: "root", parent_id: null, selectable: false, name: "Pack" },
    { item_id: "e1", parent_id: "root", selectable: true, name: "Episode 1" }
  ]
}

export const page = (data: ReadonlyArray<unknown>, next_cursor: string | null, has_more: boolean) => ({
  data,
  meta: { next_cursor, has_more }
})

/** Branded identifiers for calls. */
export const fileId = Schema.decodeSync(FileId)
export const downloadId = Schema.decodeSync(DownloadId)
export const selectionId = Schema.decodeSync(SelectionId)
export const cursor = Schema.decodeSync(Cursor)
