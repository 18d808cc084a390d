import { assert, describe, it } from "@effect/vitest"
import type { Limits } from "../../src/api/schemas/account.ts"
import type { SelectionItem } from "../../src/api/schemas/downloads.ts"
import { afterOneDownload, capHold } from "../../src/intake/accountCaps.ts"
import { chooseItem } from "../../src/intake/selectionPolicy.ts"

const item = (
  item_id: string,
  name: string,
  size_bytes?: number,
  parent_id: string | null = "root"
): SelectionItem => ({
  item_id,
  name,
  parent_id,
  selectable: true,
  ...(size_bytes === undefined ? {} : { size_bytes })
})

/** The emulator's file stage: a root (not selectable) and its files. */
const files: ReadonlyArray<SelectionItem> = [
  { item_id: "root", parent_id: null, selectable: false, name: "Show" },
  item("f1", "Show.mkv", 900),
  item("f2", "Subs/Show.en.srt", 2_000),
  item("f3", "Extras/Show.sample.mkv", 90)
]
const qualities: ReadonlyArray<SelectionItem> = [
  item("q-2160p", "2160p", undefined, null),
  item("q-1080p", "1080p", undefined, null)
]

describe("chooseItem", () => {
  it("all: the first item offered whole, else the largest", () => {
    assert.deepStrictEqual(chooseItem(qualities, "all"), { itemId: "q-2160p" })
    assert.deepStrictEqual(chooseItem(files, "all"), { itemId: "f2" })
  })

  it("largest, video, globs in order; a miss is a reason", () => {
    assert.deepStrictEqual(chooseItem(files, "largest"), { itemId: "f2" })
    assert.deepStrictEqual(chooseItem(files, "video"), { itemId: "f1" })
    assert.deepStrictEqual(chooseItem(files, ["*.nfo", "*sample*"]), { itemId: "f3" })
    assert.deepStrictEqual(chooseItem(qualities, ["1080p"]), { itemId: "q-1080p" })
    assert.deepStrictEqual(chooseItem(files, ["*.iso"]), { problem: 'no item matches selection = ["*.iso"]' })
    assert.deepStrictEqual(chooseItem(qualities, "video"), {
      problem: 'no video item in the selection (selection = "video")'
    })
    assert.deepStrictEqual(chooseItem([files[0] as SelectionItem], "all"), {
      problem: "the selection offers no selectable item"
    })
  })
})

const NO_CAPS: Limits = {
  daily_downloads: null,
  daily_download_bytes: null,
  max_file_size_bytes: null,
  concurrent_downloads: null,
  concurrent_torrents: null
}

describe("capHold", () => {
  it("lets a download go under every cap; holds it until the reset when the daily count or volume is used up", () => {
    assert.isUndefined(capHold(NO_CAPS, { downloads: 9, torrents: 9 }, true))
    const daily = { ...NO_CAPS, daily_downloads: { limit: 1, remaining: 1, resets_at: "2026-11-26T00:00:00.000000Z" } }
    assert.isUndefined(capHold(daily, { downloads: 0, torrents: 0 }, false))
    assert.deepStrictEqual(capHold(afterOneDownload(daily), { downloads: 0, torrents: 0 }, false), {
      reason: "the account's daily download limit (1) is used up; it resets at 2026-11-26T00:00:00.000000Z",
      notBefore: Date.parse("2026-11-26T00:00:00.000000Z")
    })
    const bytes = { ...NO_CAPS, daily_download_bytes: { limit: 10, remaining: 0, resets_at: "2026-11-26T00:00:00Z" } }
    assert.strictEqual(
      capHold(bytes, { downloads: 0, torrents: 0 }, false)?.notBefore,
      Date.parse("2026-11-26T00:00:00Z")
    )
  })

  it("holds while the concurrent caps are reached (torrents only for torrents), with no time known", () => {
    const caps = { ...NO_CAPS, concurrent_downloads: 3, concurrent_torrents: 1 }
    assert.isUndefined(capHold(caps, { downloads: 2, torrents: 1 }, false))
    assert.strictEqual(capHold(caps, { downloads: 2, torrents: 1 }, true)?.notBefore, null)
    assert.match(capHold(caps, { downloads: 3, torrents: 0 }, false)?.reason ?? "", /concurrent download cap \(3\)/)
  })
})
