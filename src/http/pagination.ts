// Pages of a list: an opaque cursor tied to the list (and filters) it came from, and the next page's URL
// for the `Link` header. In-memory lists page by position; database lists by key (the last key shown),
// so that rows added while a client pages neither repeat nor vanish.
import type { Request } from 'express';
import { AppError } from '../lib/errors';

export const DEFAULT_PAGE_SIZE = 50;

export class InvalidCursor extends AppError {
  constructor() {
    super(400, 'invalid_cursor', 'The pagination cursor is malformed, expired, or belongs to another list.');
  }
}

interface Position {
  list: string;
  /** The position after the last item shown (in-memory lists) or the key of the last item (database lists). */
  at: number | string;
}

type PageQuery = { limit?: number; cursor?: string };

const encode = (position: Position) => Buffer.from(JSON.stringify(position)).toString('base64url');

function decode(cursor: string, list: string): number | string {
  try {
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Position;
    if (position.list === list && (typeof position.at === 'string' || (Number.isInteger(position.at) && position.at >= 0))) return position.at;
  } catch {
    // falls through to the refusal
  }
  throw new InvalidCursor();
}

function linkTo(req: Request, list: string, limit: number, at: number | string): Record<string, string> {
  const next = new URL(req.originalUrl, 'http://local');
  next.searchParams.set('limit', String(limit));
  next.searchParams.set('cursor', encode({ list, at }));
  return { Link: `<${next.pathname}${next.search}>; rel="next"` };
}

/** One page of `items` and, when more follow, the `Link` header pointing at the next page. */
export function paginate<T>(req: Request, list: string, items: T[], query: PageQuery): { page: T[]; headers: Record<string, string> } {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const at = query.cursor ? decode(query.cursor, list) : 0;
  if (typeof at !== 'number') throw new InvalidCursor();
  const page = items.slice(at, at + limit);
  return { page, headers: at + limit >= items.length ? {} : linkTo(req, list, limit, at + limit) };
}

/** What a database list reads: `limit + 1` rows after the key `after`, the extra one telling whether more follow. */
export interface KeysetRequest<K> {
  limit: number;
  after?: K;
}

/**
 * The rows to read for a page of the list `list` (its name and filters, so a cursor cannot cross lists).
 * Keys are strings (ids, which sort by creation) or whole numbers (trace positions).
 */
export function keysetRequest<K extends string | number>(list: string, query: PageQuery, kind: 'string' | 'number'): KeysetRequest<K> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (!query.cursor) return { limit };
  const after = decode(query.cursor, `${list}#keyset`);
  if (typeof after !== kind) throw new InvalidCursor();
  return { limit, after: after as K };
}

/** The cursor of the page after the key `at` of the keyset list `list`, for lists answered without a `Link` header. */
export const keysetCursor = (list: string, at: string | number) => encode({ list: `${list}#keyset`, at });

/** The page of `rows` (read with `keysetRequest`) and the `Link` header when more follow. */
export function keysetPage<T, K extends string | number>(req: Request, list: string, rows: T[], request: KeysetRequest<K>, keyOf: (row: T) => K) {
  const page = rows.slice(0, request.limit);
  const headers = rows.length > request.limit ? linkTo(req, `${list}#keyset`, request.limit, keyOf(page[page.length - 1])) : {};
  return { page, headers };
}
