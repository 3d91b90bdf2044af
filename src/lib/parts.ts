/** `items` in consecutive parts of at most `size`, in order (the last may be shorter). */
export function partsOf<T>(items: readonly T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < items.length; i += size) parts.push(items.slice(i, i + size));
  return parts;
}
