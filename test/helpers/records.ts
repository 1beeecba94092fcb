// Small helpers of the tasks, notes and timeline tests: answers checked for their status, and the
// contacts, companies and deals that tasks and notes are associated with.
import { expect } from 'vitest';
import type { Client } from './app.ts';
import { errorBody, TYPE_OF_STATUS } from './errors.ts';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Reply = Promise<{ statusCode: number; body: string; json: () => Json }>;

/** The `data` of an answer that must have `status`. */
export async function ok(res: Reply, status = 200): Promise<Json> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  return r.json().data;
}

/**
 * The body of an answer that must fail with `status` and the type of that status (and, when given,
 * this `detail` and these other members, e.g. `param`: then the body is exactly that).
 */
export async function fails(res: Reply, status: number, detail?: unknown, members?: Record<string, unknown>): Promise<Json> {
  const r = await res;
  expect(r.statusCode, r.body).toBe(status);
  if (detail !== undefined) expect(r.json()).toEqual(errorBody(status, detail, members));
  else expect(r.json().type, r.body).toBe(TYPE_OF_STATUS[status]);
  return r.json();
}

/** A contact, a company and a deal of the client's tenant. */
export async function records(c: Client, name = 'Ada') {
  const list = await ok(c.post('/v1/lists', { name: `${name} list`, type: 'contacts' }), 201);
  const contact = await ok(c.post('/v1/contacts', { list_id: list.id, name }), 201);
  const company = await ok(c.post('/v1/companies', { name: `${name} Ltd` }), 201);
  const deal = await ok(c.post('/v1/deals', { name: `${name} deal` }), 201);
  return { list, contact, company, deal };
}

/** Every item of a list endpoint, walking its cursors `limit` at a time. */
export async function walk(c: Client, path: string, limit: number): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: Json = (await c.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).json();
    expect(page.data.length).toBeLessThanOrEqual(limit);
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

export const ids = (page: Json[]) => page.map((x) => x.id);
