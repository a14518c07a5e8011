// Pages of an in-memory list: an opaque cursor (the position after the last item shown, tied to the
// list it came from) and the next page's URL for the `Link` header.
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
  offset: number;
}

const encode = (position: Position) => Buffer.from(JSON.stringify(position)).toString('base64url');

function decode(cursor: string, list: string): number {
  try {
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Position;
    if (position.list === list && Number.isInteger(position.offset) && position.offset >= 0) return position.offset;
  } catch {
    // falls through to the refusal
  }
  throw new InvalidCursor();
}

/** One page of `items` and, when more follow, the `Link` header pointing at the next page. */
export function paginate<T>(req: Request, list: string, items: T[], query: { limit?: number; cursor?: string }): { page: T[]; headers: Record<string, string> } {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const offset = query.cursor ? decode(query.cursor, list) : 0;
  const page = items.slice(offset, offset + limit);
  if (offset + limit >= items.length) return { page, headers: {} };
  const next = new URL(req.originalUrl, 'http://local');
  next.searchParams.set('limit', String(limit));
  next.searchParams.set('cursor', encode({ list, offset: offset + limit }));
  return { page, headers: { Link: `<${next.pathname}${next.search}>; rel="next"` } };
}
