// Every URL field (the built-in ones of each resource, and custom fields of type url) holds only an
// absolute http(s) URL: `javascript:`, `data:`, `ftp:` and the forms a browser reads as them (case,
// spaces, tabs and newlines, no slashes) are 422 at the field, on create, update, assert and import.
import { afterAll, describe, expect, it } from 'vitest';
import { NOT_HTTP_URL } from '../../src/platform/http-url.ts';
import { resources } from '../../src/resources/registry.ts';
import { tenant, testApp, type Client } from '../helpers/app.ts';
import { upload, waitFor } from '../helpers/imports.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
afterAll(() => app.close());

const REFUSED = [
  'javascript:alert(1)', 'JavaScript:alert(1)', 'JAVASCRIPT:alert(document.cookie)', ' javascript:alert(1)', '\tjavascript:alert(1)',
  'java\nscript:alert(1)', 'java\tscript:alert(1)', 'javascript://%0aalert(1)', 'javascript:https://example.com',
  'data:text/html,<script>alert(1)</script>', 'DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)', 'ftp://example.com/file', 'file:///etc/passwd', 'mailto:ada@example.com',
  'http:example.com', 'https:/example.com', '//example.com/in/ada', '/in/ada', 'www.linkedin.com/in/ada', 'https://', 'http://:80/',
  ' https://www.linkedin.com/in/ada', 'https://www.linkedin.com/in/ada ', 'https://www.linked in.com/in/ada', 'https://example.com/\u202eevil',
  'https://exa\nmple.com/',
];
const ACCEPTED = ['https://www.linkedin.com/in/ada', 'HTTPS://www.LinkedIn.com/in/ada?trk=x#top', 'http://localhost:8080/in/ada', 'https://[2001:db8::1]/x', 'https://bücher.example/ü'];

type Make = (c: Client, body: Record<string, unknown>) => Promise<{ statusCode: number; body: string; json(): any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** How a record of each resource with a URL field is created (a new URL field's resource needs a line here). */
const creators: Record<string, Make> = {
  contacts: async (c, body) => {
    const list = (await c.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
    return c.post('/v1/contacts', { list_id: list, name: 'Ada', ...body });
  },
  companies: (c, body) => c.post('/v1/companies', { name: 'Analytical Engines', ...body }),
};

const urlFields = resources.flatMap((r) => Object.entries(r.fields).filter(([, f]) => f.kind === 'url').map(([name]) => ({ plural: r.plural, name })));

const refusal = (loc: string[]) => ({ detail: [{ loc, msg: NOT_HTTP_URL, type: 'value_error.url' }] });

describe('built-in URL fields', () => {
  it('exist where the test can create records', () => {
    expect(urlFields.length).toBeGreaterThan(0);
    for (const { plural } of urlFields) expect(creators[plural], plural).toBeDefined();
  });

  for (const { plural, name } of urlFields) {
    it(`${plural}.${name} takes only absolute http(s) URLs, on create and update`, async () => {
      const t = await tenant(app, { sandbox: false });
      for (const value of REFUSED) {
        const res = await creators[plural](t.live, { [name]: value });
        expect(res.statusCode, JSON.stringify(value)).toBe(422);
        expect(res.json(), JSON.stringify(value)).toMatchObject(refusal(['body', name]));
      }
      expect((await t.live.get(`/v1/${plural}`)).json().pagination.total).toBe(0);
      const record = (await creators[plural](t.live, { [name]: ACCEPTED[0] })).json().data;
      for (const value of REFUSED) {
        const res = await t.live.patch(`/v1/${plural}/${record.id}`, { [name]: value });
        expect(res.statusCode, JSON.stringify(value)).toBe(422);
        expect(res.json()).toMatchObject(refusal(['body', name]));
      }
      for (const value of ACCEPTED) {
        const res = await t.live.patch(`/v1/${plural}/${record.id}`, { [name]: value });
        expect(res.statusCode, `${value}: ${res.body}`).toBe(200);
        expect(res.json().data[name]).toBe(value);
      }
      expect((await t.live.patch(`/v1/${plural}/${record.id}`, { [name]: null })).json().data[name]).toBeNull();
    });
  }

  it('refuses a javascript: URL in an assert and in an imported row', async () => {
    const t = await tenant(app, { sandbox: false });
    const list = (await t.live.post('/v1/lists', { name: 'People', type: 'contacts' })).json().data.id;
    const asserted = await t.live('PUT', '/v1/contacts/assert', { list_id: list, work_email: 'ada@example.com', linkedin_url: 'javascript:alert(1)' });
    expect(asserted.statusCode).toBe(422);
    expect(asserted.json()).toMatchObject(refusal(['body', 'linkedin_url']));

    const csv = 'Email,LinkedIn URL\nok@example.com,https://www.linkedin.com/in/ok\nbad@example.com,javascript:alert(1)\n';
    const started = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: list, mapping: { Email: 'work_email', 'LinkedIn URL': 'linkedin_url' } } });
    expect(started.statusCode, started.body).toBe(201);
    // The import runs as a job, which may queue behind other tests' jobs on a shared store.
    const done = await waitFor(app, t.live_token, `/v1/imports/${started.json().data.id}`, undefined, 60_000);
    expect(done).toMatchObject({ status: 'completed_with_errors', created: 1, failed: 1 });
    const errors = (await t.live.get(`/v1/imports/${String(done.id)}/errors`)).json().data;
    expect(errors).toMatchObject([{ row: 3, column: 'LinkedIn URL', message: NOT_HTTP_URL }]);
  }, 90_000);
});

describe('custom fields of type url', () => {
  it('take only absolute http(s) URLs, stored as given', async () => {
    const t = await tenant(app, { sandbox: false });
    expect((await t.live.post('/v1/fields', { object: 'companies', name: 'website', data_type: 'url', unique: true })).statusCode).toBe(201);
    for (const value of REFUSED) {
      const res = await t.live.post('/v1/companies', { name: 'A', custom_fields: { website: value } });
      expect(res.statusCode, JSON.stringify(value)).toBe(422);
      expect(res.json()).toMatchObject(refusal(['body', 'custom_fields', 'website']));
    }
    const filtered = await t.live.get(`/v1/companies?custom_fields.website=${encodeURIComponent('javascript:alert(1)')}`);
    expect(filtered.statusCode).toBe(422);
    for (const value of ACCEPTED) {
      const res = await t.live.post('/v1/companies', { name: 'A', custom_fields: { website: value } });
      expect(res.statusCode, `${value}: ${res.body}`).toBe(201);
      expect(res.json().data.custom_fields.website).toBe(value);
    }
  });
});
