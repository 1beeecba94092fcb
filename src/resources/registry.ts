// The resource groups, one line each. A group is a folder with its schemas, store and routes; adding
// one means adding its line here and nothing else.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { apiKeyRoutes } from './api-keys/api-keys.routes.ts';
import { campaignRoutes } from './campaigns/campaigns.routes.ts';
import { companyRoutes } from './companies/companies.routes.ts';
import { contactRoutes } from './contacts/contacts.routes.ts';
import { eventRoutes } from './events/events.routes.ts';
import { listRoutes } from './lists/lists.routes.ts';
import { sandboxRoutes } from './sandbox/sandbox.routes.ts';
import { usageRoutes } from './usage/usage.routes.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';

const groups: Array<[prefix: string, routes: FastifyPluginAsync]> = [
  ['/auth/v1', apiKeyRoutes],
  ['/v1', listRoutes],
  ['/v1', contactRoutes],
  ['/v1', companyRoutes],
  ['/v1', campaignRoutes],
  ['/v1', usageRoutes],
  ['/v1', eventRoutes],
  ['/v1', sandboxRoutes],
  ['/v1', webhookRoutes],
];

export async function registerResources(app: FastifyInstance): Promise<void> {
  for (const [prefix, routes] of groups) await app.register(routes, { prefix });
}
