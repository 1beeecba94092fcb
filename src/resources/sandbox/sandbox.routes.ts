import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { forbidden } from '../../platform/errors.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import type { TenantTable } from '../../platform/resource/tenancy.ts';
import { mutate } from '../../platform/write.ts';
import { SandboxResetSchema } from './sandbox.schemas.ts';
import { resetSandbox } from './sandbox.store.ts';

const tags = ['Sandbox'];

/**
 * The sandbox's routes; `dataTables` names the tables a reset clears (the registry's, given by it: the
 * sandbox imports no registry, which imports every group, the sandbox's importers among them).
 */
export const sandboxRoutes = (dataTables: () => readonly TenantTable[]) => async function sandboxRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { config } = app.services;

  app.post('/sandbox/reset', {
    schema: {
      tags, operationId: 'resetSandbox', summary: 'Reset the sandbox data',
      description: 'Test keys only (a live key is 403). In one transaction, deletes every test-mode record of the organization (contacts, companies, lists and entries, campaigns and enrollments, events, the credit ledger) and restores the sandbox data set: lists (one of them a suppression list), 50 companies, contacts linked to them by e-mail domain, a draft and an active campaign, their events, and the starting credits. Live data and other organizations are never touched. The event sequence carries on, so an open event stream receives `sandbox.reset` followed by the events of the new data set.',
      response: { 200: Data(SandboxResetSchema, 'The sandbox data set was restored'), ...errorResponses() },
    },
  }, (req, reply) => {
    if (req.scope.mode !== 'test') throw forbidden('Sandbox reset needs a test key: live data is never reset');
    return mutate(req, reply, 200, (w) => resetSandbox(w, config.defaultCredits, dataTables()));
  });
};
