// The resource groups, one line each. A group is a kernel definition (`<group>.resource.ts`), whose
// CRUD routes, OpenAPI tag and sandbox-reset tables follow from it, plus the routes of its own
// operations; or, for the few groups that are not records (keys, events, usage, the sandbox), a routes
// plugin with its tag. The generated CRUD and isolation tests walk this list.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { fieldDefinitions } from '../platform/resource/custom-fields.ts';
import { linkResources, type Resource } from '../platform/resource/define.ts';
import { useCustomFieldCatalog } from '../platform/resource/search-fields.ts';
import { childRoutes } from '../platform/resource/children-routes.ts';
import type { Children } from '../platform/resource/children.ts';
import { crudRoutes } from '../platform/resource/routes.ts';
import { searchRoutes } from '../platform/resource/search-routes.ts';
import type { TenantTable } from '../platform/resource/tenancy.ts';
import { agencyClientRoutes } from './agency/clients.routes.ts';
import { agencyGrantRoutes } from './agency/grants.routes.ts';
import { apiKeyRoutes } from './api-keys/api-keys.routes.ts';
import { campaigns } from './campaigns/campaigns.resource.ts';
import { campaignRoutes } from './campaigns/campaigns.routes.ts';
import { checklistPipelines } from './checklists/checklists.resource.ts';
import { checklistRoutes } from './checklists/checklists.routes.ts';
import { companies } from './companies/companies.resource.ts';
import { connections } from './connections/connections.resource.ts';
import { contacts } from './contacts/contacts.resource.ts';
import { dealContacts } from './deals/deal-contacts.children.ts';
import { dealEvidence } from './deals/deal-evidence.children.ts';
import { deals } from './deals/deals.resource.ts';
import { dealRoutes } from './deals/deals.routes.ts';
import { sendingDomains } from './domains/domains.resource.ts';
import { domainRoutes } from './domains/domains.routes.ts';
import { eventRoutes } from './events/events.routes.ts';
import { exportRoutes } from './exports/exports.routes.ts';
import { importRoutes } from './imports/imports.routes.ts';
import { inbox } from './inbox/inbox.resource.ts';
import { inboxRoutes } from './inbox/inbox.routes.ts';
import { publicInboundRoutes } from './inbox/public.routes.ts';
import { smsCallbackRoutes } from './outbox/sms-callbacks.routes.ts';
import { fieldRoutes } from './fields/fields.routes.ts';
import { lists } from './lists/lists.resource.ts';
import { mailboxes } from './mailboxes/mailboxes.resource.ts';
import { mailboxRoutes } from './mailboxes/mailboxes.routes.ts';
import { members } from './members/members.resource.ts';
import { notes } from './notes/notes.resource.ts';
import { outboxMessages } from '../platform/outbox/outbox.resource.ts';
import { outboxRoutes } from './outbox/outbox.routes.ts';
import { organizationRoutes } from './organization/organization.routes.ts';
import { products } from './products/products.resource.ts';
import { publicQuoteRoutes } from './quotes/public.routes.ts';
import { quotes } from './quotes/quotes.resource.ts';
import { quoteRoutes } from './quotes/quotes.routes.ts';
import { listRoutes } from './lists/lists.routes.ts';
import { sandboxRoutes } from './sandbox/sandbox.routes.ts';
import { enrollments } from './sequences/enrollments.resource.ts';
import { sequences } from './sequences/sequences.resource.ts';
import { sequenceRoutes } from './sequences/sequences.routes.ts';
import { sequenceSteps } from './sequences/steps.children.ts';
import { suppressions } from './suppressions/suppressions.resource.ts';
import { unsubscribeRoutes } from './suppressions/unsubscribe.routes.ts';
import { tasks } from './tasks/tasks.resource.ts';
import { timelineRoutes } from './timeline/timeline.routes.ts';
import { usageRoutes } from './usage/usage.routes.ts';
import { webhookEndpoints } from './webhooks/webhooks.resource.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';
import { voiceAgents } from './voice/agents.resource.ts';
import { calls } from './voice/calls.resource.ts';
import { callRoutes } from './voice/calls.routes.ts';
import { voiceNumbers } from './voice/numbers.resource.ts';
import { voiceRubrics } from './voice/rubrics.resource.ts';
import { dialerSessions } from './voice/sessions.resource.ts';
import { sessionRoutes } from './voice/sessions.routes.ts';
import { voiceCallbackRoutes } from './voice/voice-callbacks.routes.ts';

interface Group {
  /** Where the group's routes live; '' for routes outside the APIs (public pages). */
  prefix: '/v1' | '/auth/v1' | '' | `/v1/${string}`;
  tag: { name: string; description: string };
  /** The kernel definition of a record group. */
  resource?: Resource;
  /** Routes of the group beyond the kernel's CRUD. */
  routes?: FastifyPluginAsync;
  /** Kernel children of the resource's records (children.ts): their routes under each record. */
  children?: Children[];
  /** Tenant tables of a group that is not a kernel resource (cleared by the sandbox reset). */
  tables?: TenantTable[];
}

const resource = (r: Resource, routes?: FastifyPluginAsync, children?: Children[]): Group => ({ prefix: '/v1', tag: { name: r.tag, description: r.tagDescription }, resource: r, routes, children });
/** A resource whose routes live under a path of its group (`/v1/voice/numbers`). */
const under = (prefix: Group['prefix'], r: Resource, routes?: FastifyPluginAsync): Group => ({ ...resource(r, routes), prefix });

export const groups: Group[] = [
  resource(contacts),
  resource(companies),
  resource(lists, listRoutes),
  resource(campaigns, campaignRoutes),
  resource(deals, dealRoutes, [dealContacts, dealEvidence]),
  resource(checklistPipelines, checklistRoutes),
  resource(members),
  resource(tasks),
  resource(notes),
  { prefix: '/v1', tag: { name: 'Timelines', description: 'Everything that happened to a contact, company or deal, newest first' }, routes: timelineRoutes },
  resource(products),
  resource(quotes, quoteRoutes),
  // The public link of a sent quote: needs no key, read and answered by its recipient.
  { prefix: '', tag: { name: 'Public quotes', description: 'A sent quote through its public link, with no API key: its page, its JSON form and the recipient\'s answer' }, routes: publicQuoteRoutes, tables: ['quote_links'] },
  resource(suppressions),
  // The unsubscribe link of a message: needs no key, opened (GET) and used (POST) by its recipient or their mail provider.
  { prefix: '', tag: { name: 'Unsubscribe links', description: 'The one-click unsubscribe link of a message, with no API key: its confirmation page and the unsubscribe itself (RFC 8058)' }, routes: unsubscribeRoutes },
  {
    prefix: '/v1', tag: { name: 'Fields', description: 'Custom fields of records, and the built-in fields of each object' },
    routes: fieldRoutes(() => resources.filter((r) => r.customFields)), tables: ['fields', 'field_values'],
  },
  // Read when registered: by then `resources` below holds every definition.
  { prefix: '/v1', tag: { name: 'Search', description: 'Every searchable object at once, by full text' }, routes: (app, options) => searchRoutes(resources)(app, options) },
  { prefix: '/v1', tag: { name: 'Events', description: 'The record of every change, paged or streamed live' }, routes: eventRoutes },
  { prefix: '/v1', tag: { name: 'Organization', description: 'The organization a key acts on, and its mode' }, routes: organizationRoutes },
  { prefix: '/v1', tag: { name: 'Usage', description: 'The credit ledger' }, routes: usageRoutes, tables: ['usage_transactions'] },
  { prefix: '/v1', tag: { name: 'Sandbox', description: 'The test-mode sample data set' }, routes: sandboxRoutes(() => dataTables) },
  { prefix: '/auth/v1', tag: { name: 'API keys', description: 'Key management' }, routes: apiKeyRoutes },
  { prefix: '/auth/v1', tag: { name: 'Agency grants', description: 'Access this organization offers agencies' }, routes: agencyGrantRoutes },
  { prefix: '/v1', tag: { name: 'Agency', description: 'An agency\'s client organizations and what it spent in them' }, routes: agencyClientRoutes },
  // A sandbox reset keeps the endpoints (configuration, like API keys) and clears their deliveries.
  // An import's file and an export's CSV are kept in file_chunks until the work ends.
  { prefix: '/v1', tag: { name: 'Imports', description: 'CSV files of contacts or companies, written in the background' }, routes: importRoutes, tables: ['imports', 'import_errors', 'file_chunks'] },
  { prefix: '/v1', tag: { name: 'Exports', description: 'CSV files of records, written in the background and downloaded' }, routes: exportRoutes, tables: ['exports'] },
  { ...resource(webhookEndpoints, webhookRoutes), tables: ['webhook_deliveries'] },
  // Providers' accounts (configuration, kept by a sandbox reset) and every message made through them.
  resource(connections),
  resource(outboxMessages, outboxRoutes),
  // The addresses messages are sent from (configuration, kept by a reset), with their limits.
  resource(mailboxes, mailboxRoutes),
  resource(sendingDomains, domainRoutes),
  // Threads of inbound mail, and the inbound side of e-mail connections (their inbound URL, IMAP
  // polls), whose state (inbound_links, imap_cursors) a sandbox reset keeps, like the connections.
  resource(inbox, inboxRoutes),
  // Sequences, their steps and lifecycle; each contact's way through one (its enrollment).
  resource(sequences, sequenceRoutes, [sequenceSteps]),
  resource(enrollments),
  // A connection's inbound URL: a mail provider posts raw messages to it, signed, with no API key.
  { prefix: '', tag: { name: 'Inbound mail', description: 'The inbound URL of an e-mail connection, with no API key: a mail provider posts each raw message its mailbox receives, signed' }, routes: publicInboundRoutes },
  { prefix: '', tag: { name: 'SMS callbacks', description: 'Where an SMS provider posts what became of the texts sent through a connection, with no API key: signed by the provider' }, routes: smsCallbackRoutes },
  // Voice: numbers and rubrics (configuration, kept by a reset), agents, dialer sessions over lists, their calls.
  under('/v1/voice', voiceNumbers),
  under('/v1/voice', voiceAgents),
  under('/v1/voice/dialer', dialerSessions, sessionRoutes),
  under('/v1/voice', calls, callRoutes),
  under('/v1/voice', voiceRubrics),
  { prefix: '', tag: { name: 'Voice callbacks', description: 'Where a telephony provider posts the progress of the calls placed through a connection, with no API key: signed by the provider' }, routes: voiceCallbackRoutes },
];

/** Every kernel resource, with their relations to each other resolved. */
export const resources: Resource[] = groups.flatMap((g) => (g.resource ? [g.resource] : []));
linkResources(resources);
// Custom fields are searchable: the search engine reads the tenant's definitions from the fields group.
useCustomFieldCatalog({ definitions: (db, resource, scope) => fieldDefinitions(db, scope, resource.plural) });

/** Where a resource's routes are: `/v1/contacts`, `/v1/voice/numbers`. */
export const resourcePath = (r: Resource): string => `${groups.find((g) => g.resource === r)!.prefix}/${r.plural}`;

/** The OpenAPI tags, in the order of the groups. */
export const tags = groups.map((g) => g.tag);

/** Every table holding a tenant's data (the sandbox reset clears them; events and counters aside). */
export const dataTables: TenantTable[] = groups.flatMap((g) => [...(g.resource && !g.resource.keptOnReset ? [g.resource.table, ...(g.resource.ownedTables ?? [])] : []), ...(g.tables ?? [])]);

export async function registerResources(app: FastifyInstance): Promise<void> {
  for (const g of groups) {
    if (g.resource) await app.register(crudRoutes(g.resource), { prefix: g.prefix });
    for (const c of g.children ?? []) await app.register(childRoutes(c), { prefix: g.prefix });
    if (g.routes) await app.register(g.routes, { prefix: g.prefix });
  }
}
