// Agencies for tests: an agency organization with agency keys, clients linked through grants, and a
// client acting for another organization (X-Org-Id).
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { createOrganization } from '../../src/orgs/orgs.ts';
import { client, tenant, type Client } from './app.ts';
import { errorBody } from './errors.ts';

export const NOT_LINKED = 'Organization not linked to this agency key';
export const MISMATCH = 'X-Org-Id does not match the organization of the API key (acting for another organization needs an agency key)';

let agencies = 0;

/** A fresh agency organization with its default keys and one live and one test agency key. */
export async function agency(on: FastifyInstance) {
  const org = await createOrganization(on.services.database, on.services.config, `Agency ${++agencies}`, { agency: true });
  const live = client(on, org.live_token);
  const test = client(on, org.test_token);
  const key = async (c: Client, mode: 'live' | 'test') => {
    const res = await c.post('/auth/v1/api-keys', { name: `${mode} agency key`, mode, is_agency: true });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const liveKey = await key(live, 'live');
  const testKey = await key(test, 'test');
  return { ...org, live, test, liveKey, testKey, agencyLive: client(on, liveKey.api_key_token), agencyTest: client(on, testKey.api_key_token) };
}

/** `c` acting for `orgId`. */
export const as = (c: Client, orgId: string): Client => {
  const h = { 'x-org-id': orgId };
  const call = ((method, url, body, headers) => c(method, url, body, { ...h, ...headers })) as Client;
  call.get = (url, headers) => c.get(url, { ...h, ...headers });
  call.post = (url, body, headers) => c.post(url, body, { ...h, ...headers });
  call.patch = (url, body, headers) => c.patch(url, body, { ...h, ...headers });
  call.delete = (url, headers) => c.delete(url, { ...h, ...headers });
  return call;
};

export async function grant(c: Client) {
  const res = await c.post('/auth/v1/agency-grants');
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function link(agencyKey: Client, code: string) {
  const res = await agencyKey.post('/v1/agency/clients/link', { grant_code: code });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** An existing organization that granted `a` live access, redeemed by the agency's live key. */
export async function linkedClient(app: FastifyInstance, a: Awaited<ReturnType<typeof agency>>) {
  const t = await tenant(app);
  await link(a.agencyLive, (await grant(t.live)).grant_code);
  return t;
}

export const ids = async (c: Client, url: string) => (await c.get(url)).json().data.map((x: { id: string }) => x.id);

/** An answer refused with `status`: exactly the body of that status's error type and `detail`. */
export async function refused(res: { statusCode: number; json(): { detail: unknown } }, status: number, detail: string) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual(errorBody(status, detail));
}
