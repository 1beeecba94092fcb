// The resource groups, one line each. A group is a folder with its schemas, store and routes; adding
// one means adding its line here and nothing else.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { apiKeyRoutes } from './api-keys/api-keys.routes.ts';
import { contactRoutes } from './contacts/contacts.routes.ts';
import { listRoutes } from './lists/lists.routes.ts';

const groups: Array<[prefix: string, routes: FastifyPluginAsync]> = [
  ['/auth/v1', apiKeyRoutes],
  ['/v1', listRoutes],
  ['/v1', contactRoutes],
];

export async function registerResources(app: FastifyInstance): Promise<void> {
  for (const [prefix, routes] of groups) await app.register(routes, { prefix });
}
