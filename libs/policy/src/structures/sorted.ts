/**
 * The first index of `sorted` where `holds` is true, for a `holds` that is false up to a point of
 * the array and true from there on (a binary search): `sorted.length` when it never holds. With
 * `(item) => item >= key` it is where `key` is, or would go, in an ascending array.
 */
export function firstIndexWhere<T>(sorted: readonly T[], holds: (item: T) => boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(sorted[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}
