// Reading a tenant's records back through the API: every page of a listing, and its event trail.
import type { Actor } from './actors.ts';
import { json } from './reply.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Record_ = Record<string, any>;

/** Every item of a paged listing (walking its cursors), and the `total` it reported. */
export async function readAll(actor: Actor, url: string): Promise<{ items: Record_[]; total: number }> {
  const items: Record_[] = [];
  let total = -1;
  let cursor: string | null = null;
  const join = url.includes('?') ? '&' : '?';
  do {
    const reply = await actor.call('GET', `${url}${join}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (reply.status !== 200) throw new Error(`GET ${url} answered ${reply.status} ${reply.body}`);
    const page = json(reply);
    if (total < 0) total = page.pagination.total;
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return { items, total };
}

/** The tenant's events of one type, oldest first. */
export async function eventsOf(actor: Actor, type: string): Promise<Record_[]> {
  return (await readAll(actor, `/v1/events?type=${encodeURIComponent(type)}`)).items.reverse();
}
