// Table types for Kysely. Every tenant table carries org_id and mode; timestamps are unix seconds.


export type Mode = 'live' | 'test';

interface Tenant {
  org_id: string;
  mode: Mode;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  is_agency: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  mode: Mode;
  name: string;
  token_hash: string;
  is_agency: number;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** JSON array of scopes, `["*"]` for every scope. */
  scopes: string;
  expires_at: number | null;
}

/** Who made a change: the key and its organization (an agency's, when it acts for a client). */
interface Actor {
  actor_key_id: string | null;
  actor_org_id: string | null;
}

/** A client organization an agency (the row's organization) may act for, in the row's mode. */
export interface AgencyLinksTable extends Tenant {
  client_org_id: string;
  grant_id: string | null;
  linked_at: number;
}

/** Access a client (the row's organization) offers an agency through a single-use code. */
export interface AgencyGrantsTable extends Tenant {
  id: string;
  code_hash: string;
  agency_org_id: string | null;
  created_at: number;
  expires_at: number;
  redeemed_at: number | null;
  revoked_at: number | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** Maintained per-tenant numbers: row totals, the event sequence, the credit balance. */
export interface CountersTable extends Tenant {
  name: string;
  value: number;
}

export interface IdempotencyKeysTable extends Tenant {
  key: string;
  fingerprint: string;
  status: number | null;
  body: string | null;
  created_at: number;
  /** Last renewal of the claim's lease (seconds); a claim not renewed for LEASE_S is taken over. */
  locked_at: number;
  /** The token of the request holding the claim (0006-idempotency-lease); null on older rows. */
  lease: string | null;
}

export interface ListsTable extends Tenant {
  id: string;
  name: string;
  type: string;
  description: string | null;
  member_count: number;
  created_at: number;
  updated_at: number;
}

export interface ListEntriesTable extends Tenant {
  id: string;
  list_id: string;
  value: string;
  kind: string;
  created_at: number;
}

/** A record (company, deal) on a list of its type. */
export interface ListMembersTable extends Tenant {
  list_id: string;
  record_id: string;
  created_at: number;
}

export interface ContactsTable extends Tenant {
  id: string;
  list_id: string;
  name: string | null;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  company: string | null;
  company_id: string | null;
  work_email: string | null;
  email_domain: string | null;
  personal_email: string | null;
  phone: string | null;
  linkedin_url: string | null;
  city: string | null;
  country: string | null;
  seniority: string | null;
  department: string | null;
  tags: unknown;
  custom_fields?: unknown;
  created_at: number;
  updated_at: number;
}

export interface CompaniesTable extends Tenant {
  id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  employee_count: number | null;
  annual_revenue: number | null;
  city: string | null;
  country: string | null;
  linkedin_url: string | null;
  description: string | null;
  tags: unknown;
  custom_fields?: unknown;
  created_at: number;
  updated_at: number;
}

export interface CampaignsTable extends Tenant {
  id: string;
  name: string;
  status: string;
  channels: unknown;
  list_id: string | null;
  steps: unknown;
  schedule: unknown;
  audience_count: number;
  launched_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface CampaignEnrollmentsTable extends Tenant {
  campaign_id: string;
  contact_id: string;
  created_at: number;
}

export interface EventsTable extends Tenant, Actor {
  id: string;
  seq: number;
  type: string;
  object_id: string;
  data: unknown;
  previous_attributes: unknown;
  created_at: number;
}

export interface UsageTransactionsTable extends Tenant, Actor {
  id: string;
  type: string;
  amount: number;
  balance_after: number;
  operation: string;
  resource_id: string | null;
  description: string | null;
  created_at: number;
}

export interface DealPipelinesTable extends Tenant {
  id: string;
  name: string;
  /** 1 for the tenant's default pipeline, else null (a unique index keeps one default). */
  is_default: number | null;
  created_at: number;
  updated_at: number;
}

export interface DealStagesTable extends Tenant {
  id: string;
  pipeline_id: string;
  name: string;
  position: number;
  probability: number;
  stage_type: string;
  color: string | null;
  checklist_stage_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface DealsTable extends Tenant {
  id: string;
  name: string;
  amount: number | null;
  currency: string;
  pipeline_id: string;
  stage_id: string;
  status: string;
  probability: number | null;
  expected_close_date: string | null;
  closed_at: number | null;
  company_id: string | null;
  owner: string | null;
  source: string | null;
  tags: unknown;
  custom_fields: unknown | null;
  /** The deal's answer as JSON text, null until written again after a change that cleared it (stored-json.ts). */
  doc?: string | null;
  created_at: number;
  updated_at: number;
}

export interface ChecklistPipelinesTable extends Tenant {
  id: string;
  name: string;
  description: string | null;
  /** The built-in template it was made from (`meddpicc`, `bant`, `spiced`), else null. */
  template: string | null;
  created_at: number;
  updated_at: number;
}

export interface ChecklistStagesTable extends Tenant {
  id: string;
  pipeline_id: string;
  name: string;
  position: number;
  stage_type: string;
  /** JSON arrays of evidence keys. */
  required_elements: unknown;
  recommended_elements: unknown;
  /** JSON object: channel → script. */
  channel_scripts: unknown;
  exit_criteria: string | null;
  created_at: number;
  updated_at: number;
}

export interface EvidenceKeysTable extends Tenant {
  id: string;
  key: string;
  title: string;
  description: string | null;
  created_at: number;
  updated_at: number;
}

export interface DealEvidenceTable extends Tenant {
  deal_id: string;
  key: string;
  note: string | null;
  source: string | null;
  created_at: number;
  updated_at: number;
}

/** Background work: see src/platform/jobs/. Times are milliseconds. */
export interface JobsTable extends Tenant {
  id: string;
  kind: string;
  payload: string;
  concurrency_key: string | null;
  /** The tenant's key of a scheduled job (`w.schedule`): at most one waiting job per key. */
  schedule_key: string | null;
  status: string;
  run_at: number;
  attempts: number;
  max_attempts: number;
  lease_until: number | null;
  lease_token: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface DealContactsTable extends Tenant {
  deal_id: string;
  contact_id: string;
  role: string | null;
  created_at: number;
  updated_at: number;
}

export interface DealStageHistoryTable extends Tenant {
  id: string;
  deal_id: string;
  pipeline_id: string;
  stage_id: string;
  /** The stage's name once it is deleted (null while it exists: its current name is read). */
  stage_name?: string | null;
  entered_at: number;
  left_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookEndpointsTable extends Tenant {
  id: string;
  url: string;
  description: string | null;
  event_types: unknown;
  all_events: number;
  is_active: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  disabled_reason: string | null;
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

/** A custom field's definition (see src/platform/resource/custom-fields.ts). */
export interface FieldsTable extends Tenant {
  id: string;
  object: string;
  name: string;
  title: string;
  data_type: string;
  options: unknown;
  required: number;
  unique: number;
  description: string | null;
  list_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface DealStageTotalsTable extends Tenant {
  stage_id: string;
  currency: string;
  deal_count: number;
  amount: number;
  weighted_own: number;
  amount_following: number;
}

export interface WebhookDeliveriesTable extends Tenant {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  attempts: unknown;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One row per record and set custom field: what filters, sorting and `unique` read. */
export interface FieldValuesTable extends Tenant {
  field_id: string;
  record_id: string;
  value_text: string | null;
  value_num: number | null;
  unique_value: string | null;
}

/** A record (task, note, …) associated with a contact, company or deal (`target` is its table). */
export interface RecordAssociationsTable extends Tenant {
  record_id: string;
  target: string;
  target_id: string;
  created_at: number;
}

export interface TasksTable extends Tenant {
  id: string;
  title: string;
  description: string | null;
  type: string;
  status: string;
  priority: number;
  due_at: number | null;
  completed_at: number | null;
  assignee: string | null;
  external_key: string | null;
  custom_fields: unknown | null;
  created_at: number;
  updated_at: number;
}

export interface ProductsTable extends Tenant {
  id: string;
  name: string;
  sku: string | null;
  unit_price: number;
  currency: string;
  description: string | null;
  active: number;
  custom_fields: unknown | null;
  created_at: number;
  updated_at: number;
}

export interface NotesTable extends Tenant {
  id: string;
  content: string;
  created_by: string | null;
  pinned: number;
  external_key: string | null;
  custom_fields: unknown | null;
  created_at: number;
  updated_at: number;
}

/** A quote; `line_items` is JSON (see src/resources/quotes/line-items.ts). */
export interface QuotesTable extends Tenant {
  id: string;
  number: string;
  title: string;
  deal_id: string | null;
  contact_id: string | null;
  currency: string;
  line_items: unknown;
  tax_percent: number;
  subtotal: number;
  discount_total: number;
  tax_total: number;
  total: number;
  valid_until: number | null;
  terms: string | null;
  status: string;
  revision: number;
  sent_at: number | null;
  viewed_at: number | null;
  accepted_at: number | null;
  signer_name: string | null;
  signer_ip: string | null;
  declined_at: number | null;
  decline_reason: string | null;
  voided_at: number | null;
  custom_fields: unknown | null;
  created_at: number;
  updated_at: number;
}

/**
 * The public link of a sent quote, found by its token before the tenant is known. Only the SHA-256
 * of the token is stored (hex), so a copy of the database opens no quote.
 */
export interface QuoteLinksTable extends Tenant {
  token_hash: string;
  quote_id: string;
  created_at: number;
}

/** A CSV import (see src/resources/imports/). `write_mode` is the API's `mode`: create, upsert or update. */
export interface ImportsTable extends Tenant {
  id: string;
  object: string;
  write_mode: string;
  list_id: string | null;
  /** JSON: `{column header: target field}`. */
  mapping: unknown;
  source: string;
  filename: string | null;
  size_bytes: number;
  delimiter: string;
  status: string;
  rows_total: number;
  rows_processed: number;
  rows_created: number;
  rows_updated: number;
  rows_skipped: number;
  rows_failed: number;
  error: string | null;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ImportErrorsTable extends Tenant {
  import_id: string;
  row: number;
  n: number;
  column_name: string | null;
  message: string;
}

/** A stored file (an import's upload, an export's CSV) in chunks of about 1 MiB. */
export interface FileChunksTable extends Tenant {
  file_id: string;
  seq: number;
  data: Uint8Array;
}

export interface ExportsTable extends Tenant {
  id: string;
  object: string;
  /** JSON: the list route's query parameters. */
  filters: unknown;
  /** JSON: a search body (filters, filter groups, full text, sort) selecting the records instead; null for filters. */
  search: unknown;
  status: string;
  rows_total: number | null;
  rows_processed: number;
  size_bytes: number;
  error: string | null;
  started_at: number | null;
  finished_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface DB {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  settings: SettingsTable;
  counters: CountersTable;
  idempotency_keys: IdempotencyKeysTable;
  lists: ListsTable;
  list_entries: ListEntriesTable;
  list_members: ListMembersTable;
  contacts: ContactsTable;
  companies: CompaniesTable;
  campaigns: CampaignsTable;
  campaign_enrollments: CampaignEnrollmentsTable;
  events: EventsTable;
  usage_transactions: UsageTransactionsTable;
  deal_pipelines: DealPipelinesTable;
  deal_stages: DealStagesTable;
  deals: DealsTable;
  deal_contacts: DealContactsTable;
  deal_stage_history: DealStageHistoryTable;
  deal_stage_totals: DealStageTotalsTable;
  deal_evidence: DealEvidenceTable;
  checklist_pipelines: ChecklistPipelinesTable;
  checklist_stages: ChecklistStagesTable;
  evidence_keys: EvidenceKeysTable;
  agency_links: AgencyLinksTable;
  agency_grants: AgencyGrantsTable;
  jobs: JobsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  fields: FieldsTable;
  field_values: FieldValuesTable;
  record_associations: RecordAssociationsTable;
  tasks: TasksTable;
  notes: NotesTable;
  products: ProductsTable;
  quotes: QuotesTable;
  quote_links: QuoteLinksTable;
  imports: ImportsTable;
  import_errors: ImportErrorsTable;
  file_chunks: FileChunksTable;
  exports: ExportsTable;
}

