// Auto-pagination: a list operation answers one page and, while more follow, a `Link: <…>; rel="next"`
// header. The iterator reads the next page only when the caller has consumed the current one.
import { type Result, unwrap } from './results';

/** Where the next page starts: the `cursor` and `limit` of the `Link` header's next URL. */
export interface PageStart {
  cursor?: string;
  limit?: number;
}

const NEXT = /<([^>]*)>\s*;\s*rel="?next"?/;

export function nextPage(link: string | null): PageStart | undefined {
  const target = link && NEXT.exec(link)?.[1];
  if (!target) return undefined;
  // The URL is relative to the API's origin; only its query matters here.
  const query = new URL(target, 'http://link.invalid').searchParams;
  const cursor = query.get('cursor') ?? undefined;
  if (!cursor) return undefined;
  const limit = query.get('limit');
  return { cursor, limit: limit === null ? undefined : Number(limit) };
}

/**
 * Every item of a list, page after page. `fetchPage` gets `{}` for the first page (the caller's own query
 * carries its `limit`) and then the start of each next page, to combine with the same filters: the server
 * refuses a cursor sent with other filters than the ones it came from.
 */
export async function* paginate<T>(fetchPage: (page: PageStart) => Promise<Result<T[]>>): AsyncGenerator<T, void, undefined> {
  let page: PageStart | undefined = {};
  while (page) {
    const result: Result<T[]> = await fetchPage(page);
    yield* unwrap(result);
    page = nextPage(result.response.headers.get('link'));
  }
}

/** Every item of a list, gathered into one array, for lists that stay short. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
