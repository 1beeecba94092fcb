// The list helper every list endpoint uses. Rows come newest first in keyset order on a unique,
// time-ordered key, so walking cursors costs the same at any depth and never skips or repeats a row
// while others write. Cursors are opaque: the last key and the next page number, signed with HMAC
// over the organization, mode, endpoint and filters, so a cursor is only good where it was issued.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { canonicalJson } from './canonical-json.ts';
import { cursorError, malformedCursor } from './errors.ts';

export interface PageQuery {
  page?: number;
  limit?: number;
  cursor?: string;
}

export interface PageRequest {
  /** Rows strictly after this key (in descending order), when walking a cursor. */
  after: string | number | undefined;
  /** Rows to skip, when paging by number. */
  offset: number;
  /** Rows to fetch: one more than the page, to know whether another page exists. */
  take: number;
}

export interface ListBody<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
  pagination: { page: number; limit: number; total: number; has_next: boolean; next_cursor: string | null };
}

/** A list whole on one page (a record's steps in their new order): the shape of every list answer. */
export const wholeList = <T>(data: T[]): ListBody<T> => ({
  object: 'list', data, next_cursor: null, pagination: { page: 1, limit: data.length, total: data.length, has_next: false, next_cursor: null },
});

const PAGING_PARAMS = new Set(['page', 'limit', 'cursor']);
/** Issued cursors are far shorter; a longer one is malformed, without the cost of checking it. */
const MAX_CURSOR_LENGTH = 512;

function binding(request: FastifyRequest, query: object): string {
  const filters: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) if (!PAGING_PARAMS.has(k)) filters[k] = v;
  const path = request.url.split('?')[0];
  return `${request.scope.orgId}|${request.scope.mode}|${path}|${canonicalJson(filters)}`;
}

function sign(secret: string, bound: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(bound).update('|').update(payload).digest().subarray(0, 16);
}

interface CursorPayload {
  k: string | number;
  p: number;
}

function decode(secret: string, bound: string, cursor: string): CursorPayload {
  const dot = cursor.indexOf('.');
  if (cursor.length > MAX_CURSOR_LENGTH || dot <= 0 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)) throw malformedCursor();
  const payload = cursor.slice(0, dot);
  // Compared as text, not as decoded bytes: base64url has several spellings of the same bytes (the
  // unused low bits of the last character), and only the one issued is a valid cursor.
  const given = Buffer.from(cursor.slice(dot + 1));
  const expected = Buffer.from(sign(secret, bound, payload).toString('base64url'));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw cursorError('Invalid cursor: it was not issued for this endpoint, these filters and this key');
  }
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorPayload;
    if ((typeof parsed.k !== 'string' && typeof parsed.k !== 'number') || !Number.isInteger(parsed.p) || parsed.p < 2) throw new Error('shape');
    return parsed;
  } catch {
    throw malformedCursor();
  }
}

function encode(secret: string, bound: string, value: CursorPayload): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${sign(secret, bound, payload).toString('base64url')}`;
}

/**
 * Answers one page. `fetch` returns up to `take` rows in the endpoint's order; `count` the exact
 * total for the same filters (asked after `fetch`, and run meanwhile); `keyOf` the keyset value of a row.
 */
export async function paginate<Row, T>(
  request: FastifyRequest,
  query: PageQuery & object,
  options: {
    fetch: (page: PageRequest) => Promise<Row[]>;
    count: () => Promise<number>;
    keyOf: (row: Row) => string | number;
    map: (rows: Row[]) => T[] | Promise<T[]>;
  },
): Promise<ListBody<T>> {
  const secret = request.server.services.secret;
  const limit = query.limit ?? 50;
  const bound = binding(request, query);
  let page = query.page ?? 1;
  let after: string | number | undefined;
  if (query.cursor !== undefined) {
    const decoded = decode(secret, bound, query.cursor);
    after = decoded.k;
    page = decoded.p;
  }
  const offset = after === undefined ? (page - 1) * limit : 0;
  const [rows, total] = await Promise.all([options.fetch({ after, offset, take: limit + 1 }), options.count()]);
  const hasNext = rows.length > limit;
  if (hasNext) rows.length = limit;
  const nextCursor = hasNext ? encode(secret, bound, { k: options.keyOf(rows[rows.length - 1]), p: page + 1 }) : null;
  return {
    object: 'list',
    data: await options.map(rows),
    next_cursor: nextCursor,
    pagination: { page, limit, total, has_next: hasNext, next_cursor: nextCursor },
  };
}
