/**
 * Sample libraries for the primary user, generated deterministically:
 *
 * - `demo`: about forty items — nested folders, videos with media metadata and posters,
 *   subtitles, music, documents, a locked file, and names a local file system cannot take
 *   as they are ("a/b", "..", "CON", "trailing. ", a 300-character name, NFD Unicode,
 *   and names that only start with two dots, which it can ("..hidden", "...txt", "../x"),
 *   case-colliding siblings, reserved characters).
 * - `files=N,depth=D`: N files spread over a folder tree D levels deep (about 20 files per
 *   folder), every tenth a video with media; 100,000 files take well under a second.
 * - `empty`: nothing.
 */

import type { PosterSpec } from "./item.ts"
import type { Kind } from "./kinds.ts"
import { classify } from "./kinds.ts"
import type { LibrarySpec } from "./librarySpec.ts"
import { sampleMedia } from "./media.ts"
import type { EmulatorState } from "./state.ts"

export { type LibrarySpec, parseLibrarySpec } from "./librarySpec.ts"

export const generateLibrary = (state: EmulatorState, userId: string, spec: LibrarySpec): void => {
  if (spec.kind === "demo") demo(state, userId)
  else if (spec.kind === "generated") generated(state, userId, spec.files, spec.depth)
}

const MiB = 1024 * 1024

interface FileSpec {
  readonly name: string
  readonly size: number
  readonly video?: {
    readonly hdr?: boolean
    readonly languages?: ReadonlyArray<string>
    readonly status?: "pending" | "ready" | "unavailable"
  }
  readonly poster?: boolean
  readonly locked?: boolean
}

type Node = FileSpec | { readonly folder: string; readonly children: ReadonlyArray<Node> }

const DEMO: ReadonlyArray<Node> = [
  { name: "Welcome.txt", size: 1_234 },
  {
    folder: "Movies",
    children: [
      {
        folder: "Big Buck Bunny (2008)",
        children: [
          {
            name: "Big Buck Bunny (2008).mkv",
            size: 48 * MiB + 12_345,
            video: { languages: ["eng", "deu"] },
            poster: true
          },
          { name: "Big Buck Bunny (2008).en.srt", size: 38_211 },
          { name: "Big Buck Bunny (2008).de.srt", size: 40_007 },
          { name: "poster.jpg", size: 182_004 }
        ]
      },
      {
        folder: "Sintel (2010)",
        children: [
          {
            name: "Sintel (2010).mkv",
            size: 64 * MiB + 777,
            video: { hdr: true, languages: ["eng", "spa", "fra"] },
            poster: true
          },
          { name: "Sintel (2010).en.srt", size: 29_876 }
        ]
      },
      { name: "Tears of Steel (2012).mp4", size: 24 * MiB + 5, video: {}, poster: true, locked: true },
      { name: "Elephants Dream (2006).mkv", size: 16 * MiB + 99, video: { status: "pending" } }
    ]
  },
  {
    folder: "TV",
    children: [
      {
        folder: "Example Show",
        children: [
          {
            folder: "Season 01",
            children: [
              { name: "Example Show S01E01.mkv", size: 12 * MiB + 1, video: {}, poster: true },
              { name: "Example Show S01E01.en.srt", size: 21_000 },
              { name: "Example Show S01E02.mkv", size: 12 * MiB + 2, video: {}, poster: true },
              { name: "Example Show S01E03.mkv", size: 12 * MiB + 3, video: { status: "unavailable" } }
            ]
          },
          {
            folder: "Season 02",
            children: [{ name: "Example Show S02E01.mkv", size: 13 * MiB, video: {}, poster: true }]
          }
        ]
      }
    ]
  },
  {
    folder: "Music",
    children: [
      {
        folder: "Sample Album",
        children: [
          { name: "01 - Opening.flac", size: 3 * MiB + 100 },
          { name: "02 - Middle.flac", size: 4 * MiB + 200 },
          { name: "cover.jpg", size: 95_000 }
        ]
      }
    ]
  },
  {
    folder: "Documents",
    children: [
      { name: "manual.pdf", size: 2 * MiB + 17 },
      { name: "notes.txt", size: 0 },
      { name: "backup.zip", size: 5 * MiB + 3 }
    ]
  },
  {
    folder: "Names to sanitize",
    children: [
      { name: "a/b", size: 10 },
      { name: "..", size: 11 },
      { name: "..hidden", size: 22 },
      { name: "...txt", size: 23 },
      { name: "../x", size: 24 },
      { name: "CON", size: 12 },
      { name: "trailing. ", size: 13 },
      { name: ` leading space.txt`, size: 14 },
      { name: `${"very long name ".repeat(19)}end.txt`, size: 15 },
      { name: "Ame\u0301lie (2001).mkv", size: 2 * MiB, video: {} },
      { name: "Readme.txt", size: 16 },
      { name: "README.txt", size: 17 },
      { name: 'reserved <>:"|?* chars.txt', size: 18 },
      { name: ".hidden", size: 19 },
      { folder: "Ca\u0301fe\u0301", children: [{ name: "menu.txt", size: 20 }] },
      { folder: "Café", children: [{ name: "menu.txt", size: 21 }] }
    ]
  }
]

const demo = (state: EmulatorState, userId: string): void => {
  const user = state.user(userId)
  if (!user) throw new Error(`no user ${userId}`)
  let seed = 1
  const add = (nodes: ReadonlyArray<Node>, parentId: string | null) => {
    for (const node of nodes) {
      if ("folder" in node) {
        const folder = user.tree.add({ type: "folder", parentId, name: node.folder, kind: "folder", mimeType: "" })
        add(node.children, folder.id)
        continue
      }
      seed++
      const { kind, mimeType } = classify(node.name)
      user.tree.add({
        type: "file",
        parentId,
        name: node.name,
        kind,
        mimeType,
        sizeBytes: node.size,
        locked: node.locked ?? false,
        media:
          node.video === undefined
            ? null
            : sampleMedia({
                title: node.name.replace(/\.[^.]+$/, ""),
                seed,
                sizeBytes: node.size,
                ...(node.video.hdr === undefined ? {} : { hdr: node.video.hdr }),
                ...(node.video.languages === undefined ? {} : { languages: node.video.languages }),
                ...(node.video.status === undefined ? {} : { status: node.video.status })
              }),
        poster: node.poster === true ? posterFor(seed) : null
      })
    }
  }
  add(DEMO, null)
}

const generated = (state: EmulatorState, userId: string, files: number, depth: number): void => {
  const user = state.user(userId)
  if (!user) throw new Error(`no user ${userId}`)
  const folderCount = depth === 0 ? 0 : Math.max(1, Math.ceil(files / 20))
  const branching = depth === 0 ? 0 : Math.max(2, Math.ceil(folderCount ** (1 / depth)))
  // Breadth-first folders, `branching` per parent, at most `depth` levels.
  const folders: Array<string | null> = [null]
  let level: Array<string | null> = [null]
  let made = 0
  for (let d = 0; d < depth && made < folderCount; d++) {
    const next: Array<string | null> = []
    for (const parent of level) {
      for (let b = 0; b < branching && made < folderCount; b++) {
        made++
        const folder = user.tree.add({
          type: "folder",
          parentId: parent,
          name: `folder-${d + 1}-${made}`,
          kind: "folder",
          mimeType: ""
        })
        next.push(folder.id)
        folders.push(folder.id)
      }
    }
    level = next
  }
  for (let i = 0; i < files; i++) {
    const parentId = folders[i % folders.length] ?? null
    const template = TEMPLATES[i % TEMPLATES.length]!
    const name = `file-${String(i).padStart(7, "0")}.${template.ext}`
    const size = template.kind === "video" ? 4 * MiB + ((i * 7919) % MiB) : 1024 + ((i * 104_729) % (256 * 1024))
    user.tree.add({
      type: "file",
      parentId,
      name,
      kind: template.kind,
      mimeType: classify(name).mimeType,
      sizeBytes: size,
      media: template.kind === "video" ? sampleMedia({ title: name, seed: i, sizeBytes: size }) : null,
      poster: template.kind === "video" ? posterFor(i) : null
    })
  }
}

const TEMPLATES: ReadonlyArray<{ readonly ext: string; readonly kind: Kind }> = [
  { ext: "mkv", kind: "video" },
  { ext: "srt", kind: "subtitle" },
  { ext: "txt", kind: "document" },
  { ext: "jpg", kind: "image" },
  { ext: "flac", kind: "audio" },
  { ext: "nfo", kind: "document" },
  { ext: "pdf", kind: "document" },
  { ext: "zip", kind: "archive" },
  { ext: "bin", kind: "other" },
  { ext: "png", kind: "image" }
]

const posterFor = (seed: number): PosterSpec => ({
  width: 640,
  height: 360,
  dominantColor: `#${((seed * 2_654_435_761) >>> 8).toString(16).padStart(6, "0").slice(0, 6)}`
})
