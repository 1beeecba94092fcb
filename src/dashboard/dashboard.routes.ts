// The web dashboard at /dashboard: one HTML page, the browser modules of ./ui and the front-end
// libraries (Preact, htm) served as ES modules straight from their installed packages, mapped by an
// import map. No build step and nothing fetched from elsewhere: it works offline. The page calls the
// public API with the key the user signs in with; these routes need no key and serve no data.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../platform/errors.ts';

interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
const extensionOf = (name: string) => name.slice(name.lastIndexOf('.'));

/** The libraries the browser imports by bare name, and the file of the installed package each is. */
const VENDOR: Record<string, { specifier: string; module: string }> = {
  'preact.mjs': { specifier: 'preact', module: 'preact' },
  'hooks.mjs': { specifier: 'preact/hooks', module: 'preact/hooks' },
  'htm.mjs': { specifier: 'htm', module: 'htm' },
};

/** Reads every asset once, at start: a handful of small files, answered from memory. */
function loadAssets(): { ui: Map<string, Asset>; vendor: Map<string, Asset> } {
  const uiDir = new URL('./ui/', import.meta.url);
  const ui = new Map<string, Asset>();
  for (const name of readdirSync(uiDir)) {
    const type = TYPES[extensionOf(name)];
    if (type) ui.set(name, { body: readFileSync(new URL(name, uiDir)), type });
  }
  const vendor = new Map<string, Asset>();
  for (const [name, { module }] of Object.entries(VENDOR)) {
    // The source-map comment would make a browser with devtools open ask for a file not served.
    const text = readFileSync(fileURLToPath(import.meta.resolve(module)), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '');
    vendor.set(name, { body: Buffer.from(text), type: TYPES['.mjs'] });
  }
  return { ui, vendor };
}

const IMPORT_MAP = JSON.stringify({ imports: Object.fromEntries(Object.entries(VENDOR).map(([name, { specifier }]) => [specifier, `/dashboard/vendor/${name}`])) });
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Scripts from this origin only, plus the import map, allowed by its hash; no inline code or style. */
export const DASHBOARD_CSP = [
  "default-src 'self'", `script-src 'self' ${sha256(IMPORT_MAP)}`, "style-src 'self'", "img-src 'self' data:",
  "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Revenue Data Service dashboard</title>
<link rel="stylesheet" href="/dashboard/ui/style.css">
<script type="importmap">${IMPORT_MAP}</script>
<script type="module" src="/dashboard/ui/app.js"></script>
</head>
<body>
<div id="root"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;

const HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cross-origin-opener-policy': 'same-origin' };
const FileParams = Type.Object({ file: Type.String({ maxLength: 100 }) });
const hidden = { hide: true, security: [] };

function send(reply: FastifyReply, asset: Asset | undefined) {
  if (!asset) throw notFound('Not Found');
  // Assets change only with a deploy; a short cache keeps reloads quick and deploys visible.
  return reply.headers({ ...HEADERS, 'content-type': asset.type, 'cache-control': 'public, max-age=300' }).send(asset.body);
}

export async function dashboardRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { ui, vendor } = loadAssets();
  const page = (_req: unknown, reply: FastifyReply) =>
    reply.headers({ ...HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': DASHBOARD_CSP, 'cache-control': 'no-store' }).send(PAGE);

  app.get('/dashboard', { config: { public: true }, schema: hidden }, page);
  app.get('/dashboard/', { config: { public: true }, schema: hidden }, page);
  app.get('/dashboard/ui/:file', { config: { public: true }, schema: { ...hidden, params: FileParams } }, (req, reply) =>
    send(reply, ui.get(req.params.file)));
  app.get('/dashboard/vendor/:file', { config: { public: true }, schema: { ...hidden, params: FileParams } }, (req, reply) =>
    send(reply, vendor.get(req.params.file)));
}
