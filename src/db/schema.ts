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
  agency_links: AgencyLinksTable;
  agency_grants: AgencyGrantsTable;
}

