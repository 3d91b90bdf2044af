/**
 * Lists are `{data, hasMore, nextCursor}` pages (docs/design.md §7): a repository fetches one
 * item more than the page holds, which says whether there is a next page without counting.
 */
export interface Page<T> {
  readonly data: T[];
  readonly hasMore: boolean;
  readonly nextCursor: string | null;
}

export interface PageRequest {
  /** 1 to 100 (checked against the spec at the edge). */
  readonly limit: number;
  /** The cursor of the previous page: the page starts after it. */
  readonly startingAfter: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 20;

/** A page from up to `limit + 1` items in list order. */
export function pageOf<T>(items: readonly T[], limit: number, cursorOf: (item: T) => string): Page<T> {
  const data = items.slice(0, limit);
  const hasMore = items.length > limit;
  return { data, hasMore, nextCursor: hasMore ? cursorOf(data[data.length - 1]!) : null };
}
