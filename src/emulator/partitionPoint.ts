/**
 * The emulator's one binary search: in an array where every value for which `before`
 * holds comes first, the index of the first value for which it does not (the length when
 * it holds for all). O(log n).
 */
export const partitionPoint = <T>(values: ReadonlyArray<T>, before: (value: T) => boolean): number => {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(values[mid]!)) lo = mid + 1
    else hi = mid
  }
  return lo
}
