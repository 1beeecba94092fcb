// Real objects for route walks, made through the API by the actor that will own them. Keys are
// route prefixes: a route is served by the factory of its own URL, else of its URL up to its last
// `:param` (so /v1/campaigns/:id/launch uses '/v1/campaigns', /v1/lists/:id/entries/:entry_id uses
// '/v1/lists/:id/entries'). A documented route with an id and no factory fails the suite by name.
import { randomBytes } from 'node:crypto';
import { resourcePath, resources } from '../../../src/resources/registry.ts';
import { multipartBody } from '../../helpers/imports.ts';
import { rawMail, signed, uniqueId } from '../../helpers/inbox.ts';
import { receiver, type Receiver } from '../../helpers/receiver.ts';
import { bodySchema, type Api, type ApiRoute } from './api.ts';
import type { Actor, Params } from './actors.ts';
import { json } from './reply.ts';
import { exampleOf, isReference, stringBranch } from './schema-values.ts';
import { bodySentinel } from './secrets.ts';

export type Factory = (api: Api, actor: Actor) => Promise<Params>;

function fail(message: string): never {
  throw new Error(message);
}

export function findRoute(api: Api, method: string, url: string): ApiRoute {
  return api.routes.find((r) => r.method === method && r.url === url) ?? fail(`no route ${method} ${url}`);
}

/** POST to `path` with a body from its documented schema; the new object's id fills `:id`. */
const created = (path: string, options: { body?: Record<string, unknown>; idField?: string } = {}): Factory => async (api, actor) => {
  const body = { ...(await bodyFor(api, actor, findRoute(api, 'POST', path)) as object), ...options.body };
  const reply = await actor.call('POST', path, { body });
  if (reply.status !== 201) fail(`factory POST ${path} (${actor.label}) answered ${reply.status} ${reply.body}`);
  return { id: json(reply).data[options.idField ?? 'id'] };
};

/** Objects that other writes make (events, ledger lines): the newest one listed after a write. */
const listed = (path: string): Factory => async (api, actor) => {
  await make(api, actor, '/v1/lists', { fresh: true });
  const reply = await actor.call('GET', `${path}?limit=1`);
  const first = reply.status === 200 ? json(reply).data[0] : undefined;
  return { id: first?.id ?? fail(`factory GET ${path} (${actor.label}) listed nothing: ${reply.status} ${reply.body}`) };
};

const suppressionEntry: Factory = async (_api, actor) => {
  const list = await actor.call('POST', '/v1/lists', { body: { name: bodySentinel(), type: 'suppressions' } });
  const id = json(list).data.id;
  const tag = randomBytes(4).toString('hex');
  const added = await actor.call('POST', `/v1/lists/${id}/entries`, { body: { values: [`a${tag}@example.com`, `b${tag}.example.org`] } });
  if (added.status !== 201) fail(`factory entries (${actor.label}) answered ${added.status} ${added.body}`);
  return { id, entry_id: json(added).data.entries[0].id };
};

/** A client organization of an agency (the actor's organization must be an agency). */
const agencyClient: Factory = async (_api, actor) => {
  const reply = await actor.call('POST', '/v1/agency/clients', { body: { name: bodySentinel() } });
  if (reply.status !== 201) fail(`factory agency client (${actor.label}) answered ${reply.status} ${reply.body}`);
  return { org_id: json(reply).data.org_id };
};

/** An endpoint with one delivery (of a test event) to a receiver that is never reached. */
const webhookDelivery: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/webhooks', { fresh: true });
  const sent = await actor.call('POST', `/v1/webhooks/${id}/test`, { body: {} });
  if (sent.status !== 201) fail(`factory webhook test (${actor.label}) answered ${sent.status} ${sent.body}`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const listed = await actor.call('GET', `/v1/webhooks/${id}/deliveries?limit=1`);
    const first = json(listed).data?.[0];
    if (first) return { id, delivery_id: first.id };
    if (Date.now() > deadline) fail(`factory webhook delivery (${actor.label}): no delivery recorded`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const listMember: Factory = async (api, actor) => {
  const list = await actor.call('POST', '/v1/lists', { body: { name: bodySentinel(), type: 'companies' } });
  const id = json(list).data.id;
  const { id: record_id } = await make(api, actor, '/v1/companies', { fresh: true });
  const added = await actor.call('POST', `/v1/lists/${id}/members`, { body: { ids: [record_id] } });
  if (added.status !== 201) fail(`factory members (${actor.label}) answered ${added.status} ${added.body}`);
  return { id, record_id };
};

/** A thread of the actor's inbox: a message posted, signed, to the inbound URL of a fresh e-mail connection. */
const inboxThread: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/connections', { fresh: true });
  const minted = await actor.call('POST', `/v1/connections/${id}/inbound-url`, { body: {} });
  if (minted.status !== 201) fail(`factory inbound URL (${actor.label}) answered ${minted.status} ${minted.body}`);
  const { url, secret } = json(minted).data;
  const raw = Buffer.from(rawMail({ subject: bodySentinel(), messageId: uniqueId() }));
  const posted = await actor.call('POST', new URL(url).pathname, { payload: raw, headers: { 'content-type': 'message/rfc822', ...signed(secret, raw) } });
  if (posted.status !== 200) fail(`factory inbound message (${actor.label}) answered ${posted.status} ${posted.body}`);
  return { id: json(posted).data.thread_id };
};

/** A message of the actor's outbox: a mailbox's test, sent through a connection to the local driver (in either mode). */
const outboxMessage: Factory = async (_api, actor) => {
  const connection = await actor.call('POST', '/v1/connections', { body: { kind: 'email', provider: 'local' } });
  if (connection.status !== 201) fail(`factory local connection (${actor.label}) answered ${connection.status} ${connection.body}`);
  const mailbox = await actor.call('POST', '/v1/mailboxes', { body: { email: `o${randomBytes(6).toString('hex')}@example.com`, connection_id: json(connection).data.id } });
  if (mailbox.status !== 201) fail(`factory mailbox (${actor.label}) answered ${mailbox.status} ${mailbox.body}`);
  const sent = await actor.call('POST', `/v1/mailboxes/${json(mailbox).data.id}/test`, { body: {} });
  if (sent.status !== 200) fail(`factory outbox message (${actor.label}) answered ${sent.status} ${sent.body}`);
  return { id: json(sent).data.outbox_message_id };
};

/**
 * A connection whose mailbox can be polled: IMAP settings, at a name that never resolves (any
 * process's worker may take its polls, each failing at once). A live one is polled as soon as it is
 * made: its first poll has ended (failed) before it is used, and the walks poll again only every
 * IMAP_POLL_SECONDS (hostile-app.ts), so no poll moves its state behind a snapshot.
 */
const pollableConnection: Factory = async (api, actor) => {
  const { id } = await created('/v1/connections', {
    body: { kind: 'email', provider: 'smtp', settings: { smtp: { host: 'smtp.invalid', port: 9 }, imap: { host: 'imap.invalid', port: 9 } }, credentials: { username: 'ada', password: 'secret' } },
  })(api, actor);
  const deadline = Date.now() + 60_000;
  while (actor.mode === 'live' && json(await actor.call('GET', `/v1/connections/${id}/poll`)).data.last_polled_at === null) {
    if (Date.now() > deadline) fail(`factory pollable connection (${actor.label}): its first poll never ended`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { id };
};

/** A Twilio SMS connection (its messaging webhook is read, never called). */
const twilioConnection = created('/v1/connections', {
  body: { kind: 'sms', provider: 'twilio', settings: { account_sid: `AC${'0'.repeat(32)}`, from: '+14155550100' }, credentials: { auth_token: 'twilio-auth-token-000000' } },
});

/** A stage of a fresh pipeline of the actor. */
const pipelineStage: Factory = async (api, actor) => {
  // The actor's pipeline, so that a stage and a pipeline given together agree.
  const { id } = await make(api, actor, '/v1/deals/pipelines');
  const stage = await actor.call('POST', `/v1/deals/pipelines/${id}/stages`, { body: { name: bodySentinel() } });
  if (stage.status !== 201) fail(`factory stages (${actor.label}) answered ${stage.status} ${stage.body}`);
  return { id, stage_id: json(stage).data.id };
};

/** A stage of a fresh stage checklist pipeline (methodology) of the actor. */
const checklistStage: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/pipelines');
  const stage = await actor.call('POST', `/v1/pipelines/${id}/stages`, { body: { name: bodySentinel() } });
  if (stage.status !== 201) fail(`factory checklist stages (${actor.label}) answered ${stage.status} ${stage.body}`);
  const stageId = json(stage).data.id;
  return { id, stage_id: stageId, checklist_stage_id: stageId };
};

/** Evidence on a fresh deal, of a key of the actor's own library (so another tenant's deal never has it). */
const dealEvidence: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/deals', { fresh: true });
  const key = `k_${randomBytes(6).toString('hex')}`;
  const added = await actor.call('POST', '/v1/pipelines/evidence-library', { body: { key, title: bodySentinel() } });
  const put = await actor.call('POST', `/v1/deals/${id}/evidence`, { body: { key } });
  if (added.status !== 201 || put.status !== 201) fail(`factory deal evidence (${actor.label}) answered ${added.status} ${put.status} ${put.body}`);
  return { id, key };
};

const dealContact: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/deals', { fresh: true });
  const { id: contact_id } = await make(api, actor, '/v1/contacts', { fresh: true });
  const put = await actor.call('PUT', `/v1/deals/${id}/contacts/${contact_id}`, { body: { role: 'Champion' } });
  if (put.status !== 200) fail(`factory deal contacts (${actor.label}) answered ${put.status} ${put.body}`);
  return { id, contact_id };
};

/** A drafted sequence that can run: a mailbox, a list with a contact, and one e-mail step. */
const runnableSequence: Factory = async (api, actor) => {
  const { id } = await created('/v1/sequences')(api, actor);
  const step = await actor.call('POST', `/v1/sequences/${id}/steps`, { body: { subject: 'Hello', body: 'Hi {{ first_name | default: "there" }}' } });
  if (step.status !== 201) fail(`factory sequence step (${actor.label}) answered ${step.status} ${step.body}`);
  return { id, step_id: json(step).data.id };
};

/** An enrollment of a contact of the actor in a fresh sequence (drafted: nothing is sent). */
const enrollment: Factory = async (api, actor) => {
  const { id } = await make(api, actor, '/v1/sequences', { fresh: true });
  const { id: contact } = await make(api, actor, '/v1/contacts', { fresh: true });
  const enrolled = await actor.call('POST', `/v1/sequences/${id}/enrollments`, { body: { contact_ids: [contact] } });
  if (enrolled.status !== 201) fail(`factory enrollment (${actor.label}) answered ${enrolled.status} ${enrolled.body}`);
  return { id: json(enrolled).data.results[0].enrollment_id };
};

/** A call a fresh session placed (through a local connection in live mode) to a number that fails at once. */
const endedCall: Factory = async (api, actor) => {
  await make(api, actor, 'telephony connection');
  const { id: list_id } = await make(api, actor, '/v1/lists', { fresh: true });
  const contact = await actor.call('POST', '/v1/contacts', { body: { list_id, first_name: bodySentinel(), phone: '+442079460996' } });
  if (contact.status !== 201) fail(`factory call contact (${actor.label}) answered ${contact.status} ${contact.body}`);
  const { id } = await created('/v1/voice/dialer/sessions', { body: { list_id } })(api, actor);
  const resumed = await actor.call('POST', `/v1/voice/dialer/sessions/${id}/resume`, { body: {} });
  if (resumed.status !== 200) fail(`factory session resume (${actor.label}) answered ${resumed.status} ${resumed.body}`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const session = json(await actor.call('GET', `/v1/voice/dialer/sessions/${id}`)).data;
    const calls = json(await actor.call('GET', `/v1/voice/calls?session_id=${id}`)).data;
    if (session?.status === 'completed' && calls?.[0]) {
      const transcript = await actor.call('PUT', `/v1/voice/calls/${calls[0].id}/transcript`, { body: { text: bodySentinel() } });
      if (transcript.status !== 200) fail(`factory call transcript (${actor.label}) answered ${transcript.status} ${transcript.body}`);
      return { id: calls[0].id, session_id: id };
    }
    if (Date.now() > deadline) fail(`factory call (${actor.label}): the session did not complete: ${JSON.stringify(session)} ${JSON.stringify(calls)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/**
 * Waits until the background job of `path`/`id` (an import, an export) has ended, so that it
 * changes nothing behind a snapshot's back; returns its last state.
 */
async function ended(actor: Actor, path: string, id: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const reply = await actor.call('GET', `${path}/${id}`);
    const data = reply.status === 200 ? json(reply).data : fail(`factory GET ${path}/${id} (${actor.label}) answered ${reply.status} ${reply.body}`);
    if (!['queued', 'running'].includes(data.status)) return data;
    if (Date.now() > deadline) fail(`factory ${path}/${id} (${actor.label}) still ${data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** An import of a one-row CSV uploaded by the actor, run to its end. */
const csvImport: Factory = async (_api, actor) => {
  const { payload, contentType } = multipartBody({ csv: `Email,Name\nfactory.${randomBytes(4).toString('hex')}@example.com,${bodySentinel()}\n`, fields: { object: 'companies' } });
  const reply = await actor.call('POST', '/v1/imports', { payload, headers: { 'content-type': contentType } });
  if (reply.status !== 201) fail(`factory import (${actor.label}) answered ${reply.status} ${reply.body}`);
  const { id } = json(reply).data;
  await ended(actor, '/v1/imports', id);
  return { id };
};

/** A completed export of the actor's contacts, so that its file can be downloaded. */
const completedExport: Factory = async (api, actor) => {
  const { id } = await created('/v1/exports', { body: { object: 'contacts', filters: {} } })(api, actor);
  const last = await ended(actor, '/v1/exports', id);
  if (last.status !== 'completed') fail(`factory export (${actor.label}) ended ${String(last.status)}: ${String(last.error)}`);
  return { id };
};

/**
 * Where an import by URL fetches its CSV: a local server (the test apps allow private addresses)
 * answering a one-row CSV of contacts, a fresh address each time. The documented example URL does
 * not resolve.
 */
let csvSource: Promise<Receiver> | undefined;
const csvSourceUrl = async () => (await (csvSource ??= receiver(() => ({
  status: 200,
  headers: { 'content-type': 'text/csv' },
  body: `Email,First Name\nu${randomBytes(5).toString('hex')}@example.com,${bodySentinel()}\n`,
})))).url;

export const FACTORIES: Record<string, Factory> = {
  // Every kernel resource is made by a POST of its documented body; the registry lists them.
  ...Object.fromEntries(resources.map((r) => [resourcePath(r), created(resourcePath(r))])),
  '/auth/v1/api-keys': created('/auth/v1/api-keys', { idField: 'api_key_id' }),
  '/auth/v1/agency-grants': created('/auth/v1/agency-grants'),
  '/v1/agency/clients': agencyClient,
  /** Not a route: the unique custom field deal asserts match on (`?match=` is filled with its example, `external_id`). */
  'deal match field': async (_api, actor) => {
    const made = await actor.call('POST', '/v1/fields', { body: { object: 'deals', name: 'external_id', data_type: 'text', unique: true } });
    if (made.status !== 201) fail(`factory deal match field (${actor.label}) answered ${made.status} ${made.body}`);
    return { id: 'external_id' };
  },
  /** Not a route: the actor's own organization, for fields that name an organization. */
  organization: async (_api, actor) => ({ id: actor.orgId }),
  '/v1/lists': created('/v1/lists', { body: { type: 'contacts' } }),
  '/v1/lists/:id/entries': suppressionEntry,
  '/v1/fields': created('/v1/fields'),
  '/v1/lists/:id/members': listMember,
  '/v1/deals/pipelines': created('/v1/deals/pipelines'),
  '/v1/deals/pipelines/:id/stages': pipelineStage,
  '/v1/deals/:id/contacts': dealContact,
  '/v1/deals/:id/evidence': dealEvidence,
  '/v1/pipelines/:id/stages': checklistStage,
  '/v1/events': listed('/v1/events'),
  '/v1/usage/transactions': listed('/v1/usage/transactions'),
  '/v1/webhooks': created('/v1/webhooks'),
  '/v1/imports': csvImport,
  '/v1/exports': completedExport,
  '/v1/webhooks/:id/deliveries': webhookDelivery,
  '/v1/connections/:id/poll': pollableConnection,
  '/v1/connections/:id/sms-inbound-url': twilioConnection,
  // Messages are made by what sends them, never by a POST.
  '/v1/outbox': outboxMessage,
  // Threads are made by the mail that comes in, never by a POST.
  '/v1/inbox': inboxThread,
  '/v1/sequences': runnableSequence,
  '/v1/sequences/:id/steps': runnableSequence,
  // Enrollments are made by enrolling contacts in a sequence.
  '/v1/enrollments': enrollment,
  // Calls are placed by a running dialer session, never by a POST.
  '/v1/voice/calls': endedCall,
  // One agent per member: each of a fresh member.
  '/v1/voice/agents': async (api, actor) => created('/v1/voice/agents', { body: { member_id: (await make(api, actor, '/v1/members', { fresh: true })).id } })(api, actor),
  /** Not a route: a connection of the telephony kind, for the numbers that name one. */
  'telephony connection': created('/v1/connections', { body: { kind: 'telephony', provider: 'local', settings: {}, credentials: null } }),
};

/** Request fields naming another object, and the factory that makes one (else `/v1/<plural>`). */
const REFERENCES: Record<string, string> = {
  // The reference fields of kernel resources name their target resource.
  ...Object.fromEntries(resources.flatMap((r) => [...r.refTargets].map(([field, target]) => [field, resourcePath(target)]))),
  last_event_id: '/v1/events',
  // A deal's pipeline and stage (BODY_DEFAULTS gives a matching pair).
  pipeline_id: '/v1/deals/pipelines',
  stage_id: '/v1/deals/pipelines/:id/stages',
  stage_ids: '/v1/deals/pipelines/:id/stages',
  checklist_stage_id: '/v1/pipelines/:id/stages',
  actor_org_id: 'organization',
  // The mailbox a reply from the inbox is sent through.
  mailbox_id: '/v1/mailboxes',
  mailbox_ids: '/v1/mailboxes',
  // The record an outbox message came from (a mailbox, for a mailbox's test message).
  record_id: '/v1/mailboxes',
  // The steps of a sequence (BODY_DEFAULTS gives the sequence's own).
  step_id: '/v1/sequences/:id/steps',
  step_ids: '/v1/sequences/:id/steps',
  session_id: '/v1/voice/dialer/sessions',
  rubric_id: '/v1/voice/rubrics',
};

/** The steps of the sequence the route's factory made, and a contact of the actor. */
const stepsOfSequence = async (actor: Actor, api: Api, params?: Params) => {
  const id = params?.id ?? (await make(api, actor, '/v1/sequences')).id;
  const steps = await actor.call('GET', `/v1/sequences/${id}/steps`);
  const stepIds = steps.status === 200 ? json(steps).data.map((st: { id: string }) => st.id) : ['stp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'];
  return { step_ids: stepIds, step_id: stepIds[0], contact_id: (await make(api, actor, '/v1/contacts')).id };
};

/** The ids of every stage of the pipeline (under `base`) that the route's factory made, once each. */
const everyStage = (base: string) => async (actor: Actor, api: Api, params?: Params) => {
  const id = params?.id ?? (await make(api, actor, base)).id;
  const pipeline = await actor.call('GET', `${base}/${id}`);
  // Another tenant's pipeline (an intruder's request): any stage ids; the pipeline is what is refused.
  if (pipeline.status !== 200) return { stage_ids: ['stg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] };
  return { stage_ids: json(pipeline).data.stages.map((s: { id: string }) => s.id) };
};

/** Fields a valid body of a route needs beyond its required ones. */
const BODY_DEFAULTS: Record<string, (actor: Actor, api: Api, params?: Params) => Record<string, unknown> | Promise<Record<string, unknown>>> = {
  // Test keys may only create test keys.
  'POST /auth/v1/api-keys': (actor) => ({ mode: actor.mode }),
  // A name that never resolves (RFC 2606 `.invalid`; TEST-NET addresses are refused by the SSRF
  // guard, and a public address may hold a connection open), subscribed to nothing the suite emits:
  // deliveries fail at once and are few.
  'POST /v1/webhooks': () => ({ url: 'http://hooks.invalid:9/hook', event_types: ['campaign.paused'] }),
  // An import by URL needs a URL that answers a CSV.
  'POST /v1/imports': async () => ({ url: await csvSourceUrl() }),
  // A methodology with a stage (its stage routes and order need one).
  'POST /v1/pipelines': () => ({ stages: [{ name: 'Open' }] }),
  // Field names are unique per object; enum fields need options.
  'POST /v1/fields': () => ({ name: `f_${randomBytes(6).toString('hex')}`, data_type: 'text' }),
  // One suppression per channel and address.
  'POST /v1/suppressions': () => ({ address: `s${randomBytes(6).toString('hex')}@example.com` }),
  // A thread is snoozed until a time ahead; assigned to text of the client's own (a member id must exist).
  'POST /v1/inbox/:id/snooze': () => ({ until: Math.floor(Date.now() / 1000) + 86_400 }),
  'POST /v1/inbox/:id/assign': () => ({ assignee: 'ada@example.com' }),
  // A mailbox's address is taken once per organization and mode.
  'POST /v1/mailboxes': () => ({ email: `m${randomBytes(6).toString('hex')}@example.com` }),
  // A domain is taken once per organization and mode.
  'POST /v1/domains': () => ({ domain: `d${randomBytes(6).toString('hex')}.example.com` }),
  // An assert needs a natural key to match on.
  'PUT /v1/contacts/assert': () => ({ work_email: `a${randomBytes(6).toString('hex')}@example.com` }),
  'PUT /v1/companies/assert': () => ({ domain: `a${randomBytes(6).toString('hex')}.example.com` }),
  // Deals match only on ?match=, a unique custom field of the actor.
  'PUT /v1/deals/assert': async (actor, api) => ({ custom_fields: { [(await make(api, actor, 'deal match field')).id]: `d${randomBytes(6).toString('hex')}` } }),
  'PUT /v1/deals/assert/batch': async (actor, api) => ({ records: [{ name: bodySentinel(), custom_fields: { [(await make(api, actor, 'deal match field')).id]: `d${randomBytes(6).toString('hex')}` } }] }),
  'PUT /v1/tasks/assert': () => ({ external_key: `k${randomBytes(6).toString('hex')}` }),
  'PUT /v1/notes/assert': () => ({ external_key: `k${randomBytes(6).toString('hex')}` }),
  'PUT /v1/products/assert': () => ({ sku: `S-${randomBytes(6).toString('hex')}`, unit_price: 12_000 }),
  // A campaign with an e-mail step and a mailbox can be launched; forced, since its domains are the
  // walk's own. Its step is due a day after the launch: the walks send nothing.
  'POST /v1/campaigns': async (actor, api) => ({
    steps: [{ channel: 'email', delay_days: 1, subject: 'Hello', body: 'Hi {{ first_name | default: "there" }}' }], mailbox_ids: [(await make(api, actor, '/v1/mailboxes')).id],
  }),
  'POST /v1/campaigns/:id/launch': () => ({ force: true }),
  // Enrolling names contacts of the actor; the reorder, every step of the sequence; the preview, one of them.
  'POST /v1/sequences/:id/enrollments': async (actor, api) => ({ contact_ids: [(await make(api, actor, '/v1/contacts')).id] }),
  'POST /v1/sequences/:id/steps/reorder': async (actor, api, params) => ({ step_ids: (await stepsOfSequence(actor, api, params)).step_ids }),
  'POST /v1/sequences/:id/preview': async (actor, api, params) => {
    const { step_id, contact_id } = await stepsOfSequence(actor, api, params);
    return { step_id, contact_id };
  },
  // A number is taken once per organization and mode; its connection, when named, must be a telephony one.
  'POST /v1/voice/numbers': () => ({ phone_number: `+1415555${String(randomBytes(2).readUInt16BE() % 10_000).padStart(4, '0')}`, connection_id: null }),
  'PATCH /v1/voice/numbers/:id': async (actor, api) => ({ connection_id: (await make(api, actor, 'telephony connection')).id }),
  // Available, so that sessions dial for them (one agent per member: a second POST is 409).
  'POST /v1/voice/agents': async (actor, api) => ({ member_id: (await make(api, actor, '/v1/members')).id, status: 'available' }),
  'PATCH /v1/voice/agents/:id': () => ({ status: 'offline', phone: `+4420794${String(randomBytes(2).readUInt16BE() % 100_000).padStart(5, '0')}` }),
  // Calling hours open all day, so a session's contacts are called whenever the walk runs.
  'POST /v1/voice/dialer/sessions': () => ({ calling_window: { start_hour: 0, end_hour: 24, timezone: 'UTC' } }),
  // A quote with a line (and the contact its reference field gets) can be sent.
  'POST /v1/quotes': () => ({ line_items: [{ name: 'Onboarding workshop', quantity: 1, unit_price: 150_000 }] }),
  // A list of type companies (the factory's) holds companies.
  'POST /v1/lists/:id/members': async (actor, api) => ({ ids: [(await make(api, actor, '/v1/companies')).id] }),
  // Every stage of the pipeline the route's factory made, once each.
  'PUT /v1/deals/pipelines/:id/stages/order': everyStage('/v1/deals/pipelines'),
  'PUT /v1/pipelines/:id/stages/order': everyStage('/v1/pipelines'),
  // A deal's stage belongs to its pipeline.
  'POST /v1/deals': async (actor, api) => {
    // Made with the actor's first deal, so that later deal asserts change no fields.
    await make(api, actor, 'deal match field');
    const stage = await make(api, actor, '/v1/deals/pipelines/:id/stages');
    return { pipeline_id: stage.id, stage_id: stage.stage_id };
  },
};

/** Routes where a live key may act on the other mode's objects by design (key management). */
export const ORG_WIDE_FOR_LIVE_KEYS = ['/auth/v1/'];

/** The factory key of a route with an id: its URL up to its last `:param`. */
export function factoryKey(url: string): string | undefined {
  const at = url.lastIndexOf('/:');
  return at < 0 ? undefined : url.slice(0, at);
}

/** The factory of a route: the one of its own URL, else the one of its URL up to its last `:param`. */
export function routeFactoryKey(route: ApiRoute): string | undefined {
  return FACTORIES[route.url] ? route.url : factoryKey(route.url);
}

export function factoryFor(route: ApiRoute): Factory {
  const key = routeFactoryKey(route) ?? fail(`${route.url} has no id`);
  return FACTORIES[key] ?? fail(`No factory for ${route.method} ${route.url}: add one for '${key}' to test/security/support/factories.ts so its tenant isolation is tested`);
}

/** An object of `key` owned by `actor` (made once per actor unless `fresh`). */
export async function make(api: Api, actor: Actor, key: string, options: { fresh?: boolean } = {}): Promise<Params> {
  const factory = FACTORIES[key] ?? fail(`No factory for '${key}' in test/security/support/factories.ts`);
  if (options.fresh) return factory(api, actor);
  let made = actor.made.get(key);
  if (!made) {
    made = factory(api, actor);
    actor.made.set(key, made);
  }
  return made;
}

/** The params a route needs, from objects owned by `actor`. */
export async function paramsFor(api: Api, actor: Actor, route: ApiRoute, options: { fresh?: boolean } = {}): Promise<Params> {
  if (route.params.length === 0) return {};
  const key = routeFactoryKey(route)!;
  factoryFor(route);
  const params = await make(api, actor, key, options);
  for (const name of route.params) if (params[name] === undefined) fail(`factory '${key}' gives no :${name} for ${route.url}`);
  return params;
}

function referenceKey(field: string): string {
  const base = field.replace(/_ids?$/, '');
  const key = REFERENCES[field] ?? `/v1/${base.endsWith('y') ? `${base.slice(0, -1)}ies` : `${base}s`}`;
  return FACTORIES[key] ? key : fail(`Request field '${field}' names an object with no factory: map it in REFERENCES in test/security/support/factories.ts`);
}

/** An id owned by `actor` for a reference field (`list_id`, `contact_ids`, …). */
export async function referenceValue(api: Api, actor: Actor, field: string): Promise<string | string[]> {
  const made = await make(api, actor, referenceKey(field));
  // A sub-object's factory names it by its own param (`stage_id`), beside its parent's `id`.
  const id = made[field.replace(/_ids$/, '_id')] ?? made.id;
  return field.endsWith('_ids') ? [id] : id;
}

/**
 * A valid body for a route, owned by `actor`: on POST the required fields and every reference
 * field, on PATCH one field; references name the actor's own objects, `name` carries a sentinel;
 * `params` are the route's, for a body that must agree with them.
 */
export async function bodyFor(api: Api, actor: Actor, route: ApiRoute, params?: Params): Promise<unknown> {
  const schema = bodySchema(api, route);
  if (!schema) return undefined;
  const properties: Record<string, Record<string, unknown>> = schema.properties ?? {};
  const out: Record<string, unknown> = {};
  const names = Object.keys(properties);
  const chosen = route.method === 'POST'
    ? [...new Set([...(schema.required ?? []), ...names.filter(isReference)])]
    : [names.includes('name') ? 'name' : names.find((n) => !isReference(n)) ?? names[0]];
  for (const name of chosen.filter(Boolean)) {
    out[name] = isReference(name) ? await referenceValue(api, actor, name) : exampleOf(properties[name], name);
  }
  // An update gives a value the record was not created with: one that changes nothing is a noop.
  if (route.method === 'PATCH') {
    for (const [key, value] of Object.entries(out)) {
      const text = stringBranch(properties[key]);
      const edited = `${value} (edited)`;
      if (text && typeof value === 'string' && !text.enum && !text.format && (!text.pattern || new RegExp(text.pattern).test(edited)) && edited.length <= (text.maxLength ?? 100)) out[key] = edited;
    }
  }
  const name = properties.name && stringBranch(properties.name);
  if (name && 'name' in out && (name.maxLength ?? 100) >= 24) out.name = bodySentinel();
  return { ...out, ...(await BODY_DEFAULTS[`${route.method} ${route.url}`]?.(actor, api, params)) };
}
