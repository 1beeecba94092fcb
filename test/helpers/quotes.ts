// Shared steps of the products and quotes tests: answers checked by status, and the records a quote
// needs (a contact, a product, a sent quote), made through the API.
import type { Client } from './app.ts';
import { ok, type Json } from './records.ts';

export { fails, ok, type Json } from './records.ts';

export async function contact(c: Client): Promise<Json> {
  const list = await ok(c.post('/v1/lists', { name: 'People', type: 'contacts' }), 201);
  return ok(c.post('/v1/contacts', { list_id: list.id, name: 'Ada Lovelace', work_email: `ada${Math.random().toString(36).slice(2)}@example.com` }), 201);
}

export const product = (c: Client, body: Json = {}) => ok(c.post('/v1/products', { name: 'Seat', unit_price: 12_000, ...body }), 201);

export const quote = (c: Client, body: Json = {}) => ok(c.post('/v1/quotes', { title: 'Team plan', ...body }), 201);

/** A sent quote to a fresh contact with one free line of `unit_price` × `quantity`. */
export async function sentQuote(c: Client, body: Json = {}): Promise<Json> {
  const to = await contact(c);
  const draft = await quote(c, { contact_id: to.id, line_items: [{ name: 'Workshop', quantity: 2, unit_price: 150_000 }], ...body });
  return ok(c.post(`/v1/quotes/${draft.id}/send`));
}

export const eventsOf = async (c: Client, type: string): Promise<Json[]> => (await c.get(`/v1/events?type=${type}&limit=200`)).json().data;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
