// The page of the interactive API reference at /docs, as served: it names no other host, loads its
// script from the service, and configures the reference with every feature that would reach the
// vendor's services turned off (test/browser/api-reference.test.ts watches the page run).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, testApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

/** The configuration object the page passes to `Scalar.createApiReference`. */
function configurationOf(html: string): Record<string, unknown> {
  const call = /Scalar\.createApiReference\('#app',\s*(\{[\s\S]*?\})\s*\)\s*<\/script>/.exec(html);
  expect(call, 'the page initializes the reference').not.toBeNull();
  return JSON.parse(call![1]) as Record<string, unknown>;
}

describe('the API reference page', () => {
  it('names no other host and turns off what needs the vendor\'s services', async () => {
    const redirect = await client(app, undefined).get('/docs');
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/docs/');
    const page = await client(app, undefined).get('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const html = page.body;

    // No absolute or protocol-relative URL anywhere in the page: its script and document are the service's.
    expect(html.match(/(?:[a-z][a-z0-9+.-]*:)?\/\/[^\s"'<>)]+/gi) ?? []).toEqual([]);
    expect([...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1])).toEqual(['js/scalar.js']);
    expect(html).toContain('<title>Revenue Data Service API</title>');

    const configuration = configurationOf(html);
    expect(configuration).toMatchObject({
      url: '/v1/openapi.json',
      withDefaultFonts: false,
      hideClientButton: true,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      telemetry: false,
    });
    // Nothing in it points elsewhere: no proxy, no plugin modules, no external URLs of the vendor's services.
    for (const key of ['proxyUrl', 'proxy', 'pluginUrls', 'externalUrls', 'sources', 'cdn']) expect(configuration).not.toHaveProperty(key);
  });
});
