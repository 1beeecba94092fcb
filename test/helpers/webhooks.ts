// Helpers of the webhook tests: endpoints, the event log, deliveries, signatures.
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import type { Client } from './app.ts';
import type { Received } from './receiver.ts';

/** A type these tests never emit: endpoints on hosts nobody listens on get no deliveries. */
export const QUIET = ['campaign.paused'];

export async function endpoint(c: Client, url: string, event_types: string[] = ['*'], extra: object = {}) {
  const res = await c.post('/v1/webhooks', { url, event_types, ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; secret: string; url: string; is_active: boolean };
}

/** Every event of the tenant, oldest first, exactly as `GET /v1/events` lists it. */
export async function allEvents(c: Client): Promise<Array<Record<string, unknown> & { id: string; type: string }>> {
  const out = [];
  let cursor: string | null = null;
  do {
    const res = await c.get(`/v1/events?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode).toBe(200);
    out.push(...res.json().data);
    cursor = res.json().next_cursor;
  } while (cursor);
  return out.reverse();
}

export const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>);

export async function deliveries(c: Client, id: string, query = '') {
  const res = await c.get(`/v1/webhooks/${id}/deliveries?limit=200${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Array<{ id: string; event_id: string; status: string; attempt_count: number; attempts: Array<{ status_code: number | null; error: string | null; duration_ms: number; response_body: string | null }> }>;
}

export { waitFor } from './wait.ts';
