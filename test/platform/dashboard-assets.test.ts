// The dashboard's page and assets as served (no browser): the HTML under its Content-Security-Policy,
// the import map allowed by its hash, the browser modules and the vendored libraries; and the
// organization route the dashboard signs in with.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, tenant, testApp } from '../helpers/app.ts';

describe('the dashboard as served', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(() => app?.close());

  it('answers the page as HTML under a strict policy that allows exactly its import map', async () => {
    for (const url of ['/dashboard', '/dashboard/']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const importMap = /<script type="importmap">(.*?)<\/script>/s.exec(res.body)?.[1] ?? '';
      expect(JSON.parse(importMap).imports).toEqual({ preact: '/dashboard/vendor/preact.mjs', 'preact/hooks': '/dashboard/vendor/hooks.mjs', htm: '/dashboard/vendor/htm.mjs' });
      expect(csp).toContain(`script-src 'self' 'sha256-${createHash('sha256').update(importMap).digest('base64')}'`);
      // No other inline script, and nothing from another origin.
      expect(res.body.match(/<script/g)).toHaveLength(2);
      expect(res.body).toContain('<script type="module" src="/dashboard/ui/app.js"></script>');
      expect(res.body).not.toMatch(/https?:\/\//);
    }
  });

  it('serves the vendored libraries and the browser modules as JavaScript', async () => {
    for (const url of ['/dashboard/vendor/preact.mjs', '/dashboard/vendor/hooks.mjs', '/dashboard/vendor/htm.mjs', '/dashboard/ui/app.js', '/dashboard/ui/api.js']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.body).toMatch(/export|import/);
      expect(res.body).not.toContain('sourceMappingURL');
    }
    const css = await app.inject({ url: '/dashboard/ui/style.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answers 404 in the error shape for any other file, and never reads outside its folders', async () => {
    for (const url of ['/dashboard/ui/nope.js', '/dashboard/vendor/react.mjs', '/dashboard/ui/..%2Fdashboard.routes.ts', '/dashboard/ui/%2E%2E%2F%2E%2E%2Fapp.ts', '/dashboard/vendor/..%2F..%2Fpackage.json']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ type: 'not_found', detail: 'Not Found' });
    }
    expect((await app.inject({ url: '/dashboard?x=1' })).statusCode).toBe(422);
  });

  it('tells a key its organization and mode', async () => {
    const t = await tenant(app);
    const test = (await t.test.get('/v1/organization')).json().data;
    expect(test).toMatchObject({ id: t.org_id, mode: 'test', is_agency: false });
    expect(test.name).toMatch(/^Test org/);
    expect((await t.live.get('/v1/organization')).json().data).toMatchObject({ id: t.org_id, mode: 'live', name: test.name });
    expect((await client(app, undefined).get('/v1/organization')).statusCode).toBe(401);
  });
});
