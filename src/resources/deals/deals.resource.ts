// Deals: each in a stage of a pipeline (the default pipeline's first stage unless given); the stage's
// type is the deal's status. See deals.store.ts for the rules and pipelines.store.ts for pipelines.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, money, ref, tags, text, timestamp } from '../../platform/resource/fields.ts';
import { Nullable, Str } from '../../platform/schemas.ts';
import { afterWrite, beforeDelete, beforeWrite, enrich, hasContact, stageProbability } from './deals.store.ts';
import { createReads } from './deals.create-reads.ts';
import { STAGE_TYPES } from './pipelines.schemas.ts';

const date = (description: string) => Str({ description, format: 'date', maxLength: 10, examples: ['2026-12-31'] });
const amountBound = (description: string, example: number) => Type.Integer({ minimum: 0, maximum: 1e12, description, examples: [example] });
const idQuery = (description: string, prefix: string) => Str({ description, maxLength: 64, examples: [`${prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] });
const dealContacts = Type.Array(Type.Object({
  contact_id: Str({ description: 'A contact of the organization (else 404 `Contact not found`)', maxLength: 64, examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  role: Type.Optional(Nullable(Str({ description: 'The contact\'s role on the deal', maxLength: 100, examples: ['Champion'] }))),
}, { additionalProperties: false }), {
  maxItems: 50, description: 'Contacts to put on the new deal in the same write (each once, at most 50), as `PUT /v1/deals/{id}/contacts/{contact_id}` would: each records `deal.contact_added`. Not stored on the deal; read them with `GET /v1/deals/{id}/contacts`',
  examples: [[{ contact_id: 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', role: 'Champion' }]],
});
const force = Type.Boolean({ description: 'Enter the stage even though the deal lacks evidence its linked checklist stage requires (else 409 with `missing`); recorded on the `deal.stage_changed` event. Not stored', examples: [true] });
const amount = money({ description: 'Value of the deal in integer minor units of `currency` (cents for USD), at most 10^12', example: 4_500_000 });

export const deals = defineResource({
  name: 'deal', plural: 'deals', prefix: 'dea', table: 'deals', notFound: 'Deal not found',
  tag: 'Deals', tagDescription: 'Deals in pipelines of stages, their contacts, stage history and summary',
  fields: {
    name: text({ required: true, min: 1, description: 'Name of the deal', example: 'Analytical Engines – 50 seats' }),
    amount: { ...amount, input: amountBound(amount.description, 4_500_000) },
    currency: text({ nullable: false, default: 'USD', min: 3, max: 3, description: 'ISO 4217 currency code of `amount`, stored upper-case; `USD` when omitted', example: 'USD' }),
    pipeline_id: ref('deal_pipelines', { nullable: false, onDelete: 'restrict', check: false, prefix: 'pip', description: 'The pipeline; the default pipeline when omitted (or the pipeline of `stage_id` when only that is given). A new pipeline without `stage_id` moves the deal to its first stage' }),
    stage_id: ref('deal_stages', { nullable: false, onDelete: 'restrict', check: false, prefix: 'stg', description: 'The stage, of the deal\'s pipeline (else 400); the pipeline\'s first stage when omitted. Each change records `deal.stage_changed` and a stage-history row' }),
    status: enumOf(STAGE_TYPES, { readOnly: true, nullable: false, description: 'The type of the deal\'s stage: `open`, `won` or `lost`; read-only', example: 'open' }),
    probability: int({ max: 100, description: 'Chance of winning in percent (0–100). Answered as the stage\'s probability unless the deal sets its own; null stops following an own value', example: 25 }),
    expected_close_date: { ...text({ description: 'When the deal is expected to close, `YYYY-MM-DD`', example: '2026-12-31' }), input: date('When the deal is expected to close, `YYYY-MM-DD`') },
    closed_at: timestamp({ readOnly: true, description: 'When the deal entered a won or lost stage, unix seconds; null while open (cleared when reopened); read-only', example: 1767225600 }),
    company_id: ref('companies', { onDelete: 'set null', prefix: 'cmp', description: 'The company the deal is with; null once that company is deleted' }),
    owner: text({ max: 200, description: 'Who owns the deal (a name, e-mail or id of your own)', example: 'ada@example.com' }),
    source: text({ max: 200, description: 'Where the deal came from', example: 'inbound' }),
    tags: tags({ example: ['enterprise'] }),
  },
  inputs: { create: { force, contacts: dealContacts }, update: { force } },
  computed: {
    weighted_amount: Nullable(Type.Integer({ description: 'amount × probability / 100, rounded; null without an amount; read-only', examples: [1_125_000] })),
  },
  alongside: { stage_probability: stageProbability },
  filters: {
    pipeline_id: { op: 'eq', description: 'Only deals in this pipeline' },
    stage_id: { op: 'eq', description: 'Only deals in this stage' },
    status: { op: 'eq', description: 'Only deals with this status' },
    company_id: { op: 'eq', description: 'Only deals with this company' },
    contact_id: { op: 'where', where: hasContact, schema: idQuery('Only deals that have this contact', 'con') },
    owner: { op: 'eq', description: 'Only deals of this owner, exactly' },
    min_amount: { field: 'amount', op: 'gte', schema: amountBound('Only deals of at least this amount (minor units)', 100_000) },
    max_amount: { field: 'amount', op: 'lte', schema: amountBound('Only deals of at most this amount (minor units)', 10_000_000) },
    expected_close_after: { field: 'expected_close_date', op: 'gte', schema: date('Only deals expected to close on or after this day') },
    expected_close_before: { field: 'expected_close_date', op: 'lte', schema: date('Only deals expected to close on or before this day') },
    name: { op: 'contains', description: 'Name contains this text, case-insensitively' },
  },
  search: ['name', 'owner', 'source'],
  counter: 'deals',
  listable: true,
  customFields: true,
  // Pages of deals (by pipeline and stage above all) are read far more than deals change.
  storedJson: true,
  // Deals have no natural key: an assert matches only on a unique custom field (`?match=`).
  assert: { keys: [] },
  ownedTables: ['deal_evidence', 'deal_contacts', 'deal_stage_history', 'deal_stage_totals', 'deal_stages', 'deal_pipelines'],
  hooks: { beforeWrite, afterWrite, beforeDelete, enrich, readAhead: createReads },
  eventDocs: { updated: 'A deal was changed (also when its stage was deleted or changed type); `previous_attributes` holds the earlier values' },
  routes: {
    docs: {
      list: { description: 'Lists deals, newest first, with an exact `total`. Filters combine: `pipeline_id`, `stage_id`, `status`, `company_id`, `contact_id`, `owner` (exact), `min_amount`, `max_amount` (minor units, inclusive), `expected_close_after`, `expected_close_before` (inclusive days), `name` (contains, case-insensitive), `list_id` (on a list of type deals).' },
      create: { description: 'Creates a deal. Without `pipeline_id` and `stage_id` it goes to the first stage of the default pipeline; with only `pipeline_id`, to that pipeline\'s first stage; with only `stage_id`, to that stage\'s pipeline. A stage of another pipeline is 400; an unknown pipeline, stage or company is 404; a currency that is not ISO 4217 is 422. `status` and `closed_at` follow the stage\'s type. A stage linked to a checklist stage with required evidence is 409 `{detail, missing}` (a new deal has no evidence) unless `force: true`, which records a `deal.stage_changed` event with `forced` and `bypassed`.' },
      update: { description: 'Changes the fields given. A new `stage_id` (of the deal\'s pipeline, or of the `pipeline_id` given) records `deal.stage_changed` and a stage-history row; a new `pipeline_id` alone moves the deal to that pipeline\'s first stage. Entering a won or lost stage sets `closed_at`, reopening clears it. Entering a stage linked to a checklist stage whose required evidence the deal lacks is 409 `{detail, missing}` unless `force: true` (recorded on `deal.stage_changed` as `forced` and `bypassed`). An empty body (or `force` alone) is 400 `No fields to update`.' },
      delete: { description: 'Deletes a deal with its stage history, evidence and contact links; it leaves its lists. Reading it afterwards is 404.' },
    },
    errors: { create: [404, 409], update: [404, 409] },
  },
});
