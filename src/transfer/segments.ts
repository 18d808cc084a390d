/**
 * Segment arithmetic for a segmented download (pure).
 *
 * A file of `size` bytes is covered by segments `[start, end)` that never overlap and
 * together cover `[0, size)`. Each segment is filled from `start` upwards; `pos` is the
 * first byte not yet written, `recv` the first not yet received. Work stealing: when a
 * worker's segment is done, the largest unfinished segment is cut in two at the middle of
 * its bytes not yet received and the worker takes the upper half; the owner stops at the
 * new, lower `end`.
 *
 *   [start ........ pos ...................... end)        one segment
 *   [start ........ pos ........)[mid .......... end)     after a split
 */

/** One byte range of the file and how far it is written. */
export interface Segment {
  readonly start: number
  end: number
  /** First byte of the range not yet written (start ≤ pos ≤ end). */
  pos: number
  /**
   * First byte not yet received by the request working on it (pos ≤ recv): received
   * bytes wait in buffers for their write, and a split must not cut below them.
   */
  recv: number
}

/** First byte of `s` that no request has received yet. */
export const receivedTo = (s: Segment): number => Math.max(s.pos, s.recv)

/** Bytes of `s` that no request has received yet. */
export const unreceived = (s: Segment): number => Math.max(0, s.end - receivedTo(s))

/** How a segment is stored in the journal: `durable` counts bytes from `start`. */
export interface DurableSegment {
  readonly start: number
  readonly end: number
  readonly durable: number
}

/** Splits `[0, size)` into up to `count` segments, none smaller than `minSize` (except a lone one). */
export const planSegments = (size: number, count: number, minSize: number): Array<Segment> => {
  const n = Math.max(1, Math.min(count, Math.floor(size / Math.max(1, minSize))))
  const out: Array<Segment> = []
  for (let i = 0; i < n; i++) {
    const start = Math.floor((size * i) / n)
    const end = Math.floor((size * (i + 1)) / n)
    out.push({ start, end, pos: start, recv: start })
  }
  return out
}

/**
 * Takes the upper half of the largest unfinished segment, as a new
 * segment, when its remaining bytes are at least `minSplit`; the victim's `end` is lowered.
 * Returns undefined when nothing is worth splitting.
 */
export const splitLargest = (segments: Array<Segment>, minSplit: number): Segment | undefined => {
  let victim: Segment | undefined
  let best = 0
  for (const s of segments) {
    const left = s.end - receivedTo(s)
    if (left >= Math.max(2, minSplit) && left > best) {
      victim = s
      best = left
    }
  }
  if (victim === undefined) return undefined
  const mid = victim.end - Math.ceil(best / 2)
  const taken: Segment = { start: mid, end: victim.end, pos: mid, recv: mid }
  victim.end = mid
  segments.push(taken)
  return taken
}

/**
 * Gives up the part of `segment` not yet received, as a new open segment for another
 * worker; the segment's own request stops at the lowered end. Nothing happens unless both
 * parts keep at least one byte (a segment is never empty). Returns the new segment.
 */
export const releaseTail = (segments: Array<Segment>, segment: Segment): Segment | undefined => {
  const cut = receivedTo(segment)
  if (cut <= segment.start || cut >= segment.end) return undefined
  const tail: Segment = { start: cut, end: segment.end, pos: cut, recv: cut }
  segment.end = cut
  segments.push(tail)
  return tail
}

/** Bytes no request has received yet, over all segments. */
export const unreceivedBytes = (segments: ReadonlyArray<Segment>): number => {
  let n = 0
  for (const s of segments) n += unreceived(s)
  return n
}

/** Bytes written over all segments. */
export const writtenBytes = (segments: ReadonlyArray<Segment>): number => {
  let n = 0
  for (const s of segments) n += s.pos - s.start
  return n
}

/** True when every segment is written to its end. */
export const allWritten = (segments: ReadonlyArray<Segment>): boolean => segments.every((s) => s.pos >= s.end)

/**
 * The journal form of `segments` at this instant (values copied, so later splits do not
 * change it), with `durable` = bytes written from `start`. Sorted by start; neighbouring
 * complete segments are merged so the record stays small after many splits.
 */
export const snapshotSegments = (segments: ReadonlyArray<Segment>): Array<DurableSegment> => {
  const sorted = [...segments].sort((a, b) => a.start - b.start)
  const out: Array<DurableSegment> = []
  for (const s of sorted) {
    const durable = Math.min(s.end, s.pos) - s.start
    const last = out[out.length - 1]
    if (last !== undefined && last.end === s.start && last.durable === last.end - last.start) {
      out[out.length - 1] = { start: last.start, end: s.end, durable: last.durable + durable }
    } else {
      out.push({ start: s.start, end: s.end, durable })
    }
  }
  return out
}

/** Bytes covered by `durable` over all records. */
export const durableBytes = (records: ReadonlyArray<DurableSegment>): number => {
  let n = 0
  for (const r of records) n += r.durable
  return n
}

/**
 * Segments to resume from a journal record: valid only when they exactly cover
 * `[0, size)` without overlap and each `durable` fits its range; otherwise undefined
 * (the caller restarts from zero).
 */
export const fromDurable = (records: ReadonlyArray<DurableSegment>, size: number): Array<Segment> | undefined => {
  const sorted = [...records].sort((a, b) => a.start - b.start)
  let at = 0
  const out: Array<Segment> = []
  for (const r of sorted) {
    if (r.start !== at || r.end <= r.start || r.durable < 0 || r.durable > r.end - r.start) return undefined
    out.push({ start: r.start, end: r.end, pos: r.start + r.durable, recv: r.start + r.durable })
    at = r.end
  }
  return at === size && (size > 0 || out.length === 0) ? out : undefined
}

/**
 * Re-splits resumed segments so that up to `count` workers have work: the segments with
 * bytes left are taken first, then the largest are split while `minSplit` allows.
 */
export const spreadWork = (segments: Array<Segment>, count: number, minSplit: number): Array<Segment> => {
  const open = () => segments.filter((s) => s.pos < s.end).length
  while (open() < count && splitLargest(segments, minSplit) !== undefined) {}
  return segments.filter((s) => s.pos < s.end)
}
