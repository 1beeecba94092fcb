// The Revenue Data Service SDK: `new RevenueClient({ apiKey, baseUrl })`, one namespace per resource
// group. Every method's arguments and answer come from the generated OpenAPI types (openapi.d.ts).
import { methods } from './operations.ts';
import { streamEvents, type StreamOptions } from './events.ts';
import { Http, type ClientOptions, type RequestOptions } from './http.ts';
import type { components } from './openapi.d.ts';

export {
  ApiError, AuthenticationError, BadRequestError, ConflictError, ConnectionError, IdempotencyConflictError, InsufficientCreditsError, NotFoundError,
  PermissionError, ProviderNotConfiguredError, RateLimitError, ServiceUnavailableError, ValidationError, type ErrorType, type FieldError,
} from './errors.ts';
export type { ClientOptions, RequestOptions } from './http.ts';
export type { Event, StreamOptions } from './events.ts';
export { Page } from './pagination.ts';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks.ts';
export type { components, operations, paths, webhooks } from './openapi.d.ts';

/** Every named shape of the API: `Schemas['Contact']`, `Schemas['ContactCreate']`, … */
export type Schemas = components['schemas'];
export type Contact = Schemas['Contact'];
export type Company = Schemas['Company'];
export type List = Schemas['List'];
export type Deal = Schemas['Deal'];
export type Task = Schemas['Task'];
export type Note = Schemas['Note'];
export type Product = Schemas['Product'];
export type Quote = Schemas['Quote'];
export type Campaign = Schemas['Campaign'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];

/** The fields of an upload beside its file: `mapping` as an object (the SDK sends it as JSON text). */
export type ImportUploadOptions = Omit<Schemas['ImportUpload'], 'file' | 'mapping'> & {
  /** The file's name as the import shows it (default `import.csv`). */
  filename?: string;
  mapping?: Record<string, string | null>;
};

function groups(http: Http) {
  const { get, post, put, patch, action, delete: del } = methods(http);
  const startImport = post('/v1/imports');
  /** Uploads a CSV (its text, or a Blob such as a File) as `multipart/form-data` and starts its import. */
  const uploadImport = (file: Blob | string, { filename = 'import.csv', mapping, ...fields }: ImportUploadOptions, options?: RequestOptions): ReturnType<typeof startImport> => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, String(value));
    if (mapping) form.append('mapping', JSON.stringify(mapping));
    form.append('file', typeof file === 'string' ? new Blob([file], { type: 'text/csv' }) : file, filename);
    return http.send({ method: 'POST', path: '/v1/imports', body: form, options });
  };
  return {
    contacts: {
      create: post('/v1/contacts'),
      list: get('/v1/contacts'),
      get: get('/v1/contacts/{id}'),
      update: patch('/v1/contacts/{id}'),
      delete: del('/v1/contacts/{id}'),
      assert: put('/v1/contacts/assert'),
      assertBatch: put('/v1/contacts/assert/batch'),
      search: post('/v1/search/contacts'),
      deals: get('/v1/contacts/{id}/deals'),
      quotes: get('/v1/contacts/{id}/quotes'),
      timeline: get('/v1/contacts/{id}/timeline'),
    },
    companies: {
      create: post('/v1/companies'),
      list: get('/v1/companies'),
      get: get('/v1/companies/{id}'),
      update: patch('/v1/companies/{id}'),
      delete: del('/v1/companies/{id}'),
      assert: put('/v1/companies/assert'),
      assertBatch: put('/v1/companies/assert/batch'),
      search: post('/v1/search/companies'),
      timeline: get('/v1/companies/{id}/timeline'),
    },
    lists: {
      create: post('/v1/lists'),
      list: get('/v1/lists'),
      get: get('/v1/lists/{id}'),
      update: patch('/v1/lists/{id}'),
      delete: del('/v1/lists/{id}'),
      members: {
        add: post('/v1/lists/{id}/members'),
        list: get('/v1/lists/{id}/members'),
        remove: del('/v1/lists/{id}/members/{record_id}'),
      },
      entries: {
        add: post('/v1/lists/{id}/entries'),
        list: get('/v1/lists/{id}/entries'),
        remove: del('/v1/lists/{id}/entries/{entry_id}'),
      },
    },
    deals: {
      create: post('/v1/deals'),
      list: get('/v1/deals'),
      get: get('/v1/deals/{id}'),
      update: patch('/v1/deals/{id}'),
      delete: del('/v1/deals/{id}'),
      assert: put('/v1/deals/assert'),
      assertBatch: put('/v1/deals/assert/batch'),
      search: post('/v1/search/deals'),
      summary: get('/v1/deals/summary'),
      stageHistory: get('/v1/deals/{id}/stage-history'),
      checklist: get('/v1/deals/{id}/checklist'),
      timeline: get('/v1/deals/{id}/timeline'),
      quotes: get('/v1/deals/{id}/quotes'),
      contacts: {
        list: get('/v1/deals/{id}/contacts'),
        add: put('/v1/deals/{id}/contacts/{contact_id}'),
        remove: del('/v1/deals/{id}/contacts/{contact_id}'),
      },
      evidence: {
        record: post('/v1/deals/{id}/evidence'),
        remove: del('/v1/deals/{id}/evidence/{key}'),
      },
      pipelines: {
        create: post('/v1/deals/pipelines'),
        list: get('/v1/deals/pipelines'),
        get: get('/v1/deals/pipelines/{id}'),
        update: patch('/v1/deals/pipelines/{id}'),
        delete: del('/v1/deals/pipelines/{id}'),
        addStage: post('/v1/deals/pipelines/{id}/stages'),
        reorderStages: put('/v1/deals/pipelines/{id}/stages/order'),
        updateStage: patch('/v1/deals/pipelines/{id}/stages/{stage_id}'),
        deleteStage: del('/v1/deals/pipelines/{id}/stages/{stage_id}'),
      },
    },
    /** Stage-checklist pipelines (stages that require evidence). */
    pipelines: {
      create: post('/v1/pipelines'),
      createFromTemplate: post('/v1/pipelines/from-template'),
      list: get('/v1/pipelines'),
      get: get('/v1/pipelines/{id}'),
      update: patch('/v1/pipelines/{id}'),
      delete: del('/v1/pipelines/{id}'),
      addStage: post('/v1/pipelines/{id}/stages'),
      reorderStages: put('/v1/pipelines/{id}/stages/order'),
      updateStage: patch('/v1/pipelines/{id}/stages/{stage_id}'),
      deleteStage: del('/v1/pipelines/{id}/stages/{stage_id}'),
      evidenceLibrary: get('/v1/pipelines/evidence-library'),
      addEvidenceKey: post('/v1/pipelines/evidence-library'),
    },
    tasks: {
      create: post('/v1/tasks'),
      list: get('/v1/tasks'),
      get: get('/v1/tasks/{id}'),
      update: patch('/v1/tasks/{id}'),
      delete: del('/v1/tasks/{id}'),
      assert: put('/v1/tasks/assert'),
      assertBatch: put('/v1/tasks/assert/batch'),
      search: post('/v1/search/tasks'),
      createOnContact: post('/v1/contacts/{id}/tasks'),
      listOfContact: get('/v1/contacts/{id}/tasks'),
      createOnCompany: post('/v1/companies/{id}/tasks'),
      listOfCompany: get('/v1/companies/{id}/tasks'),
      createOnDeal: post('/v1/deals/{id}/tasks'),
      listOfDeal: get('/v1/deals/{id}/tasks'),
    },
    notes: {
      create: post('/v1/notes'),
      list: get('/v1/notes'),
      get: get('/v1/notes/{id}'),
      update: patch('/v1/notes/{id}'),
      delete: del('/v1/notes/{id}'),
      assert: put('/v1/notes/assert'),
      assertBatch: put('/v1/notes/assert/batch'),
      search: post('/v1/search/notes'),
      createOnContact: post('/v1/contacts/{id}/notes'),
      listOfContact: get('/v1/contacts/{id}/notes'),
      createOnCompany: post('/v1/companies/{id}/notes'),
      listOfCompany: get('/v1/companies/{id}/notes'),
      createOnDeal: post('/v1/deals/{id}/notes'),
      listOfDeal: get('/v1/deals/{id}/notes'),
    },
    products: {
      create: post('/v1/products'),
      list: get('/v1/products'),
      get: get('/v1/products/{id}'),
      update: patch('/v1/products/{id}'),
      delete: del('/v1/products/{id}'),
      assert: put('/v1/products/assert'),
      assertBatch: put('/v1/products/assert/batch'),
      search: post('/v1/search/products'),
    },
    quotes: {
      create: post('/v1/quotes'),
      list: get('/v1/quotes'),
      get: get('/v1/quotes/{id}'),
      update: patch('/v1/quotes/{id}'),
      delete: del('/v1/quotes/{id}'),
      search: post('/v1/search/quotes'),
      send: action('/v1/quotes/{id}/send'),
      void: action('/v1/quotes/{id}/void'),
      duplicate: action('/v1/quotes/{id}/duplicate'),
      editAsDraft: action('/v1/quotes/{id}/edit-as-draft'),
      quotableProducts: get('/v1/quotes/quotable-products'),
    },
    campaigns: {
      create: post('/v1/campaigns'),
      list: get('/v1/campaigns'),
      get: get('/v1/campaigns/{id}'),
      update: patch('/v1/campaigns/{id}'),
      delete: del('/v1/campaigns/{id}'),
      preflight: get('/v1/campaigns/{id}/launch/preflight'),
      launch: post('/v1/campaigns/{id}/launch'),
      pause: action('/v1/campaigns/{id}/pause'),
      resume: action('/v1/campaigns/{id}/resume'),
    },
    connections: {
      create: post('/v1/connections'),
      list: get('/v1/connections'),
      get: get('/v1/connections/{id}'),
      update: patch('/v1/connections/{id}'),
      delete: del('/v1/connections/{id}'),
      inboundUrl: action('/v1/connections/{id}/inbound-url'),
      pollState: get('/v1/connections/{id}/poll'),
      poll: action('/v1/connections/{id}/poll'),
    },
    domains: {
      create: post('/v1/domains'),
      list: get('/v1/domains'),
      get: get('/v1/domains/{id}'),
      update: patch('/v1/domains/{id}'),
      delete: del('/v1/domains/{id}'),
      verify: action('/v1/domains/{id}/verify'),
    },
    mailboxes: {
      create: post('/v1/mailboxes'),
      list: get('/v1/mailboxes'),
      get: get('/v1/mailboxes/{id}'),
      update: patch('/v1/mailboxes/{id}'),
      delete: del('/v1/mailboxes/{id}'),
      test: action('/v1/mailboxes/{id}/test'),
    },
    outbox: {
      list: get('/v1/outbox'),
      get: get('/v1/outbox/{id}'),
      /** Test mode: what the recipient did (delivered, opened, clicked, replied, bounced). */
      simulate: post('/v1/outbox/{id}/simulate'),
    },
    suppressions: {
      create: post('/v1/suppressions'),
      list: get('/v1/suppressions'),
      get: get('/v1/suppressions/{id}'),
      delete: del('/v1/suppressions/{id}'),
    },
    inbox: {
      list: get('/v1/inbox'),
      get: get('/v1/inbox/{id}'),
      delete: del('/v1/inbox/{id}'),
      snooze: post('/v1/inbox/{id}/snooze'),
      close: action('/v1/inbox/{id}/close'),
      reopen: action('/v1/inbox/{id}/reopen'),
      assign: post('/v1/inbox/{id}/assign'),
      tag: post('/v1/inbox/{id}/tag'),
      reply: post('/v1/inbox/{id}/reply'),
      draft: get('/v1/inbox/{id}/draft'),
    },
    sequences: {
      create: post('/v1/sequences'),
      list: get('/v1/sequences'),
      get: get('/v1/sequences/{id}'),
      update: patch('/v1/sequences/{id}'),
      delete: del('/v1/sequences/{id}'),
      run: action('/v1/sequences/{id}/run'),
      pause: action('/v1/sequences/{id}/pause'),
      resume: action('/v1/sequences/{id}/resume'),
      terminate: action('/v1/sequences/{id}/terminate'),
      preview: post('/v1/sequences/{id}/preview'),
      analytics: get('/v1/sequences/{id}/analytics'),
      steps: {
        add: post('/v1/sequences/{id}/steps'),
        list: get('/v1/sequences/{id}/steps'),
        update: patch('/v1/sequences/{id}/steps/{step_id}'),
        remove: del('/v1/sequences/{id}/steps/{step_id}'),
        reorder: post('/v1/sequences/{id}/steps/reorder'),
      },
      enrol: post('/v1/sequences/{id}/enrollments'),
      enrollments: get('/v1/sequences/{id}/enrollments'),
    },
    enrollments: {
      list: get('/v1/enrollments'),
      get: get('/v1/enrollments/{id}'),
      /** `{"status": "paused" | "active" | "finished"}` */
      update: patch('/v1/enrollments/{id}'),
      ofContact: get('/v1/contacts/{id}/enrollments'),
    },
    events: {
      list: get('/v1/events'),
      /** The live stream as an async iterator, resuming after a dropped connection. */
      stream: (options?: StreamOptions) => streamEvents(http, options),
    },
    webhooks: {
      create: post('/v1/webhooks'),
      list: get('/v1/webhooks'),
      get: get('/v1/webhooks/{id}'),
      update: patch('/v1/webhooks/{id}'),
      delete: del('/v1/webhooks/{id}'),
      eventTypes: get('/v1/webhooks/event-types'),
      deliveries: get('/v1/webhooks/{id}/deliveries'),
      redeliver: action('/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver'),
      replay: post('/v1/webhooks/{id}/replay'),
      test: action('/v1/webhooks/{id}/test'),
      rotateSecret: action('/v1/webhooks/{id}/rotate-secret'),
    },
    usage: {
      get: get('/v1/usage'),
      transactions: get('/v1/usage/transactions'),
    },
    fields: {
      create: post('/v1/fields'),
      list: get('/v1/fields'),
      get: get('/v1/fields/{id}'),
      update: patch('/v1/fields/{id}'),
      delete: del('/v1/fields/{id}'),
    },
    apiKeys: {
      create: post('/auth/v1/api-keys'),
      list: get('/auth/v1/api-keys'),
      get: get('/auth/v1/api-keys/{id}'),
      update: patch('/auth/v1/api-keys/{id}'),
      revoke: del('/auth/v1/api-keys/{id}'),
      scopes: get('/auth/v1/scopes'),
    },
    agency: {
      grantAccess: action('/auth/v1/agency-grants'),
      listGrants: get('/auth/v1/agency-grants'),
      revokeGrant: del('/auth/v1/agency-grants/{id}'),
      createClient: post('/v1/agency/clients'),
      listClients: get('/v1/agency/clients'),
      linkClient: post('/v1/agency/clients/link'),
      getClient: get('/v1/agency/clients/{org_id}'),
      unlinkClient: del('/v1/agency/clients/{org_id}'),
      usage: get('/v1/agency/usage'),
    },
    imports: {
      /** Starts an import of a CSV given by `url`; `upload` sends the file itself. */
      create: startImport,
      upload: uploadImport,
      list: get('/v1/imports'),
      get: get('/v1/imports/{id}'),
      errors: get('/v1/imports/{id}/errors'),
      errorsCsv: get('/v1/imports/{id}/errors.csv'),
      cancel: action('/v1/imports/{id}/cancel'),
    },
    exports: {
      create: post('/v1/exports'),
      list: get('/v1/exports'),
      get: get('/v1/exports/{id}'),
      /** The CSV, as text. */
      download: get('/v1/exports/{id}/file'),
    },
    search: {
      all: get('/v1/search'),
      contacts: post('/v1/search/contacts'),
      companies: post('/v1/search/companies'),
      deals: post('/v1/search/deals'),
      tasks: post('/v1/search/tasks'),
      notes: post('/v1/search/notes'),
      products: post('/v1/search/products'),
      quotes: post('/v1/search/quotes'),
    },
    organization: {
      /** The organization and mode of the key in use. */
      get: get('/v1/organization'),
    },
    sandbox: {
      reset: action('/v1/sandbox/reset'),
    },
    /** The customer-facing quote link (`/v1/public/quotes/{token}`); no key needed by the service. */
    publicQuotes: {
      get: get('/v1/public/quotes/{token}'),
      accept: post('/v1/public/quotes/{token}/accept'),
      decline: post('/v1/public/quotes/{token}/decline'),
    },
  };
}

/** A client of the Revenue Data Service for one API key: one namespace per resource group. */
export type RevenueClient = ReturnType<typeof groups>;

// A class whose instance type is the groups' inferred type (no per-method declarations to keep in step).
export const RevenueClient = class RevenueClient {
  constructor(options: ClientOptions) {
    Object.assign(this, groups(new Http(options)));
  }
} as new (options: ClientOptions) => RevenueClient;
