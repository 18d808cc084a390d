/**
 * An NZB's size before the service knows it: the sum of its segments' `bytes`, as SABnzbd
 * shows a job's size as soon as it has read the NZB. Pure; 0 when the NZB names none.
 */
export const nzbSize = (content: Uint8Array): number => {
  const text = new TextDecoder().decode(content)
  let total = 0
  for (const match of text.matchAll(SEGMENT_BYTES)) total += Number(match[1])
  return Number.isFinite(total) ? total : 0
}

// ---------------------------------------------------------------------------------------

/** A `<segment … bytes="N" …>` attribute (either quote). */
const SEGMENT_BYTES = /<segment\b[^>]*?\bbytes\s*=\s*["'](\d{1,15})["']/gi
