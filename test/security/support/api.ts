// The API as the app declares it: the route table recorded while routes were added, joined with the
// OpenAPI document, so every test that walks routes covers a new resource group as soon as it lands.
import type { FastifyInstance } from 'fastify';
import { newId } from '../../../src/platform/ids.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Schema = Record<string, any>;

export interface Operation {
  requestBody?: { content?: Record<string, { schema: Schema }> };
  parameters?: Array<{ in: string; name: string; required?: boolean; example?: unknown; schema: Schema }>;
  responses?: Record<string, { content?: Record<string, unknown> } | undefined>;
}

export interface ApiRoute {
  method: string;
  /** Fastify form: /v1/lists/:id */
  url: string;
  /** OpenAPI form: /v1/lists/{id} */
  path: string;
  params: string[];
  public: boolean;
  /** A test helper: live keys are refused before it runs (route config `testOnly`). */
  testOnly: boolean;
  operation: Operation | undefined;
}

export interface Api {
  routes: ApiRoute[];
  document: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };
  /** Resolves a local `$ref` (the document may keep shared schemas in components). */
  resolve(schema: Schema): Schema;
}

/** The interactive reference (/docs and its assets): a page about the API, not part of it. */
export const isDocsRoute = (url: string) => url === '/docs' || url.startsWith('/docs/');

/** The web dashboard (/dashboard, its modules and libraries): a client of the API, not part of it. */
export const isDashboardRoute = (url: string) => url === '/dashboard' || url.startsWith('/dashboard/');

export const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

export async function loadApi(app: FastifyInstance): Promise<Api> {
  const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  const document = response.json() as Api['document'];
  const resolve = (schema: Schema): Schema => {
    let s = schema;
    while (s && typeof s.$ref === 'string' && s.$ref.startsWith('#/')) {
      s = s.$ref.slice(2).split('/').reduce((node: Schema, key: string) => node?.[key], document as Schema);
    }
    return s;
  };
  const routes = app.routeTable.filter((r) => !isDocsRoute(r.url) && !isDashboardRoute(r.url)).map((r) => {
    const path = toOpenApiPath(r.url);
    return {
      method: r.method,
      url: r.url,
      path,
      params: [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1]),
      public: r.public,
      testOnly: r.testOnly,
      operation: document.paths[path]?.[r.method.toLowerCase()],
    };
  });
  return { routes, document, resolve };
}

/** The JSON request-body schema of a route, if it takes one. */
export function bodySchema(api: Api, route: ApiRoute): Schema | undefined {
  const schema = route.operation?.requestBody?.content?.['application/json']?.schema;
  return schema ? api.resolve(schema) : undefined;
}

/** The media type a route documents for its success (`text/csv` for a download); JSON unless it says otherwise. */
export function responseType(route: ApiRoute): string {
  const success = Object.entries(route.operation?.responses ?? {}).find(([code]) => code.startsWith('2'))?.[1];
  return Object.keys(success?.content ?? {})[0] ?? 'application/json';
}

export const answersJson = (route: ApiRoute) => /^application\/(.+\+)?json$/.test(responseType(route));

export function queryParams(route: ApiRoute) {
  return (route.operation?.parameters ?? []).filter((p) => p.in === 'query');
}

/** Fills `:param` segments. */
export function fill(url: string, params: Record<string, string>): string {
  return url.replace(/:(\w+)/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`no value for :${name} in ${url}`);
    return encodeURIComponent(params[name]);
  });
}

/** Fills `:param` segments and adds the route's required query parameters, with their documented example. */
export function fillRoute(route: ApiRoute, params: Record<string, string>): string {
  const required = queryParams(route).filter((p) => p.required);
  const query = required.map((p) => `${p.name}=${encodeURIComponent(String(p.example ?? p.schema?.examples?.[0] ?? 'a'))}`).join('&');
  return `${fill(route.url, params)}${query ? `?${query}` : ''}`;
}

/** An id of the same kind as `id` (same prefix) that names nothing. */
export function absentLike(id: string): string {
  const underscore = id.indexOf('_');
  return underscore > 0 ? newId(id.slice(0, underscore)) : newId('zzz');
}

/** The API routes (data and key management) that need a credential. */
export const guarded = (api: Api) => api.routes.filter((r) => !r.public);

/** GET routes without parameters that answer a page or a summary: what a snapshot reads. */
export const collectionReads = (api: Api) => guarded(api).filter((r) => r.method === 'GET' && r.params.length === 0);

export const accepts = (route: ApiRoute, name: string) => queryParams(route).some((p) => p.name === name);
