/**
 * Media metadata of video files, as the spec's media object. Listings carry a summary
 * (readiness, title, duration and picture size); file detail carries every field, with
 * chapters and the video, audio and embedded subtitle streams.
 */
export interface VideoStream {
  readonly index: number
  readonly codec: string
  readonly codec_tag: string
  readonly profile: string
  readonly level: number
  readonly width: number
  readonly height: number
  readonly display_aspect_ratio: string
  readonly sample_aspect_ratio: string
  readonly pixel_format: string
  readonly frame_rate: string
  readonly bitrate: number
  readonly color_range: string
  readonly color_space: string
  readonly color_transfer: string
  readonly color_primaries: string
  readonly hdr: boolean
  readonly rotation: number
  readonly default: boolean
}

export interface AudioStream {
  readonly index: number
  readonly codec: string
  readonly profile: string
  readonly channels: number
  readonly channel_layout: string
  readonly sample_rate: number
  readonly bitrate: number
  readonly language: string
  readonly title: string
  readonly default: boolean
  readonly original: boolean
  readonly commentary: boolean
  readonly hearing_impaired: boolean
  readonly visual_impaired: boolean
}

export interface SubtitleStream {
  readonly index: number
  readonly codec: string
  readonly language: string
  readonly title: string
  readonly default: boolean
  readonly forced: boolean
  readonly original: boolean
  readonly commentary: boolean
  readonly hearing_impaired: boolean
}

export interface Chapter {
  readonly start_ms: number
  readonly end_ms: number
  readonly title: string
}

export type MediaStatus = "pending" | "ready" | "unavailable"

export interface Media {
  readonly status: MediaStatus
  readonly title: string
  readonly description: string
  readonly creation_time: string
  readonly format_names: ReadonlyArray<string>
  readonly duration_ms: number
  readonly bitrate: number
  readonly width: number
  readonly height: number
  readonly chapters: ReadonlyArray<Chapter>
  readonly video_streams: ReadonlyArray<VideoStream>
  readonly audio_streams: ReadonlyArray<AudioStream>
  readonly subtitle_streams: ReadonlyArray<SubtitleStream>
}

/** The listing form: no chapters and no per-stream detail. */
export const mediaSummary = (media: Media) => ({
  status: media.status,
  title: media.title,
  description: media.description,
  creation_time: media.creation_time,
  format_names: media.format_names,
  duration_ms: media.duration_ms,
  bitrate: media.bitrate,
  width: media.width,
  height: media.height
})

/** A plausible, deterministic media object for a video of the given size and seed. */
export const sampleMedia = (options: {
  readonly title: string
  readonly seed: number
  readonly sizeBytes: number
  readonly hdr?: boolean
  readonly languages?: ReadonlyArray<string>
  readonly status?: MediaStatus
}): Media => {
  const uhd = options.hdr === true
  const width = uhd ? 3840 : options.seed % 2 === 0 ? 1920 : 1280
  const height = uhd ? 2160 : width === 1920 ? 1080 : 720
  const durationMs = 1_200_000 + (options.seed % 97) * 61_000
  const bitrate = Math.max(1, Math.floor((options.sizeBytes * 8 * 1000) / durationMs))
  const languages = options.languages ?? ["eng"]
  const chapterCount = 1 + (options.seed % 4)
  const chapterLength = Math.floor(durationMs / chapterCount)
  return {
    status: options.status ?? "ready",
    title: options.title,
    description: `Sample video ${options.title}`,
    creation_time: "2024-03-01T12:00:00.000000Z",
    format_names: ["matroska", "webm"],
    duration_ms: durationMs,
    bitrate,
    width,
    height,
    chapters: Array.from({ length: chapterCount }, (_, i) => ({
      start_ms: i * chapterLength,
      end_ms: i === chapterCount - 1 ? durationMs : (i + 1) * chapterLength,
      title: `Chapter ${i + 1}`
    })),
    video_streams: [
      {
        index: 0,
        codec: uhd ? "hevc" : "h264",
        codec_tag: uhd ? "hev1" : "avc1",
        profile: uhd ? "Main 10" : "High",
        level: uhd ? 153 : 41,
        width,
        height,
        display_aspect_ratio: "16:9",
        sample_aspect_ratio: "1:1",
        pixel_format: uhd ? "yuv420p10le" : "yuv420p",
        frame_rate: "24000/1001",
        bitrate: Math.floor(bitrate * 0.9),
        color_range: "tv",
        color_space: uhd ? "bt2020nc" : "bt709",
        color_transfer: uhd ? "smpte2084" : "bt709",
        color_primaries: uhd ? "bt2020" : "bt709",
        hdr: uhd,
        rotation: 0,
        default: true
      }
    ],
    audio_streams: languages.map((language, i) => ({
      index: i + 1,
      codec: i === 0 ? "eac3" : "aac",
      profile: i === 0 ? "" : "LC",
      channels: i === 0 ? 6 : 2,
      channel_layout: i === 0 ? "5.1(side)" : "stereo",
      sample_rate: 48_000,
      bitrate: i === 0 ? 640_000 : 128_000,
      language,
      title: i === 0 ? "Surround" : "Stereo",
      default: i === 0,
      original: i === 0,
      commentary: false,
      hearing_impaired: false,
      visual_impaired: false
    })),
    subtitle_streams: languages.map((language, i) => ({
      index: languages.length + 1 + i,
      codec: "subrip",
      language,
      title: language === "eng" ? "English" : language,
      default: false,
      forced: i === 1,
      original: i === 0,
      commentary: false,
      hearing_impaired: false
    }))
  }
}
