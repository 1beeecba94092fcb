// defineResource: one typed object describes a resource group (its table, fields, filters, counters,
// events, relations and hooks); the kernel derives from it the request and response schemas, the
// tenant-scoped store (store.ts) and the CRUD routes (routes.ts). Plain data and functions: every
// generated query and route can be read by following ordinary calls.
import { Type, type TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Expression, Kysely, RawBuilder, SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';
import type { Version } from '../list-cache.ts';
import type { PageRequest } from '../pagination.ts';
import { PageQuery, pascal, Str, StringEnum, Timestamp } from '../schemas.ts';
import type { Scope } from '../scope.ts';
import type { RouteMessages } from '../validation.ts';
import type { ReadAhead, WriteContext } from '../write.ts';
import { associationFilters, associationKinds, AssociationsInput, AssociationsOutput, kindsInWords, resolveAssociationTargets, type AssociationKindName, type AssociationTarget } from './associations.ts';
import { customFieldsField } from './custom-fields.ts';
import { checkLifecycle, lifecycleHooks, stateField, stateFieldOf, type LifecycleDefinition } from './lifecycle.ts';
import { declareResourceEvents, type CrudEvent, type ResourceEvents } from './resource-events.ts';
import type { Field } from './fields.ts';
import type { ValueType } from './search-fields.ts';
import { capitalized, withArticle } from './words.ts';
import type { TenantTable } from './tenancy.ts';

/** How a query parameter compares with its column. */
export type FilterOp = 'eq' | 'eq_ci' | 'contains' | 'gte' | 'lte' | 'lt' | 'has' | 'member_of' | 'where';

export interface FilterSpec {
  /** The field (column) compared; defaults to the parameter's name. */
  field?: string;
  op: FilterOp;
  description?: string;
  /** The parameter's schema when the field's own does not fit (a bound of a range, say). */
  schema?: TSchema;
  /** Turns the given value into the stored form (normalization); null matches nothing. */
  normalize?: (value: never) => unknown;
  /** For `where`: the condition on the resource's table for the given value (a relation, say); needs `schema`. */
  where?: (table: string, value: string) => Expression<SqlBool>;
}

export type Row = Record<string, unknown> & { id: string; created_at: number; updated_at: number };
export type ApiRecord = Record<string, unknown> & { id: string };
export type CrudOp = 'list' | 'create' | 'get' | 'update' | 'delete';

export interface Hooks {
  /**
   * Checks and completes a row about to be written (`before` is absent on create): derives stored
   * columns, checks references that need more than existence, throws the group's own errors.
   */
  beforeWrite?(w: WriteContext, row: Record<string, unknown>, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void>;
  /**
   * What `beforeWrite` reads for a create (`w.readAhead`), read at once for the creates of a group
   * commit and the records of a batch assert (ReadAhead in write.ts): only for what no write of the
   * group changes.
   */
  readAhead?: ReadAhead;
  /** Runs after the row is written (or queued to be), before the event is recorded. */
  afterWrite?(w: WriteContext, row: Row, ctx: { before?: Row; input: Record<string, unknown> }): Promise<void>;
  /** Refuses or prepares a delete (`query` is the route's query string). */
  beforeDelete?(w: WriteContext, row: Row, query: Record<string, unknown>): Promise<void>;
  /**
   * Brings the API form of a record up to the clock (a quote past its date reads as expired before a
   * job records it). Such a resource also sets `readsClock`: the list cache keys on data versions,
   * and the clock moves without a write.
   */
  asOf?(record: ApiRecord, now: number): void;
  /** Adds the computed fields of the API form to a page of records, with one query for all of them. */
  enrich?(db: Kysely<DB>, scope: Scope, rows: Row[], records: ApiRecord[]): Promise<void>;
  /**
   * Replaces the kernel's page query, for a group with its own index strategy. Given `version`, the
   * page reads it beside its rows (`Version.from`), and given `totalled` too, the total of its filters.
   */
  list?(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Record<string, unknown>, page: PageRequest, total: () => Promise<number>, version?: Version, totalled?: boolean): Promise<Row[]>;
  /** Replaces the kernel's exact count. */
  count?(db: Kysely<DB>, dialect: Dialect, scope: Scope, query: Record<string, unknown>): Promise<number>;
  /** Replaces the kernel's read of one record (a hot path answered by one fixed statement). */
  read?(db: Kysely<DB>, dialect: Dialect, scope: Scope, id: string): Promise<ApiRecord>;
  /**
   * Checks a create or update body before its write, outside the transaction: for checks that wait
   * on the network (a URL the service will call must not lead to a private address).
   */
  checkInput?(request: FastifyRequest, input: Record<string, unknown>): Promise<void>;
  /**
   * An update that changes no field still writes when this holds: `beforeWrite` then changes columns
   * that are no field (re-enabling an active webhook endpoint clears its record of failures).
   */
  writesUnchanged?(before: Row, input: Record<string, unknown>): boolean;
}

export interface ResourceDefinition {
  /** Singular, for events and messages: `contact` makes `contact.created`. */
  name: string;
  /** The URL segment and the plural in messages: `contacts`. */
  plural: string;
  /** Id prefix: `con` makes `con_01J…`. */
  prefix: string;
  table: TenantTable;
  /** OpenAPI tag and its description. */
  tag: string;
  tagDescription: string;
  /** The 404 message of an unknown id: `Contact not found`. */
  notFound: string;
  fields: Record<string, Field>;
  /** Fields answered but not stored: filled by `hooks.enrich`. */
  computed?: Record<string, TSchema>;
  /**
   * Optional members of the create or update body that are neither stored nor answered: instructions
   * to the write (a `force` flag, the children of a new record), read by the hooks from `input`.
   */
  inputs?: { create?: Record<string, TSchema>; update?: Record<string, TSchema> };
  filters?: Record<string, FilterOp | FilterSpec>;
  /** Text fields of full-text search (`q`); a resource that has them gets `POST /v1/search/<plural>` (search.ts). */
  search?: string[];
  /** A maintained total of the tenant's rows (the `counters` table), read for the unfiltered total. */
  counter?: string;
  /** Records can be members of lists of the type named like the resource (`companies`, `deals`). */
  listable?: boolean;
  /** Tables of records owned by this group beside its own (cleared with it by the sandbox reset). */
  ownedTables?: TenantTable[];
  /** Records are configuration, like API keys (webhook endpoints): the sandbox reset keeps them. */
  keptOnReset?: boolean;
  /**
   * DELETE keeps the row, stamped `deleted_at` (soft-delete.ts), and the records of cascade
   * relations to it: it answers and records what a delete does, and the record is then 404 to every
   * route and absent from lists, totals, filters, searches and reference checks. Its `beforeDelete`
   * stops what the record was doing. Not with unique fields (their indexes would hold deleted values).
   */
  softDelete?: boolean;
  /**
   * At most `max` records per organization and mode, counting those whose `field` holds `value` when
   * given (the active ones): a create or update that would make one more is 409 `message` (caps.ts).
   */
  cap?: { max: number; field?: string; value?: unknown; message: string };
  hooks?: Hooks;
  /**
   * States and the actions between them (lifecycle.ts): the state field, action routes, refusals,
   * events, frozen fields and transitional states follow from it.
   */
  lifecycle?: LifecycleDefinition;
  /** What a `<name>.created|updated|deleted` event means, where more than the generated text. */
  eventDocs?: Partial<Record<CrudEvent, string>>;
  /**
   * The kinds of write that record an event, all three unless given: records the service alone
   * writes (the outbox's messages) record events of their own instead (`message.sent`).
   */
  crudEvents?: readonly CrudEvent[];
  /**
   * Tenant-defined fields (`/v1/fields`): records carry `custom_fields`, validated on every write,
   * indexed in `field_values` and filtered by `custom_fields.<name>=` (custom-fields.ts). The table
   * needs a `custom_fields` column.
   */
  customFields?: boolean;
  /**
   * Upsert on a natural key (`PUT /<plural>/assert` and `/assert/batch`, assert.ts): the fields
   * compared, in order, each with the normalization both sides get.
   */
  assert?: { keys: Array<{ field: string; normalize?: (value: string) => string | null }> };
  /**
   * The kinds of record its records are associated with (associations.ts), each once: with
   * `['contacts', 'deals']` they carry `associations` with `contact_ids` and `deal_ids`, get the
   * `contact_id` and `deal_id` filters, and are listed and created under each associated record
   * (`/v1/contacts/{id}/<plural>`, association-routes.ts).
   */
  associations?: AssociationKindName[];
  /**
   * Records keep their answer as JSON text in a `doc` column (nullable text) of the table, written by
   * every create and update and cleared by any other change to them (stored-json.ts): a page joins
   * the texts. For groups whose pages are read far more than their records change. Not with
   * `hooks.list`, `readsClock` or `hooks.asOf` (a text cannot follow the clock), nor `associations`
   * (other records' deletions change those).
   */
  storedJson?: boolean;
  /**
   * Answers depend on the time of reading (a computed field or a filter compares with now), or on
   * background work that records no event (a sequence's scheduler moving its enrollments on): lists
   * and searches are computed afresh instead of being served from the list cache.
   */
  readsClock?: boolean;
  /**
   * Values `hooks.enrich` needs from other tables, as SQL expressions on the row (a correlated
   * subquery each), selected beside the row's columns by the statement reading one record and, on
   * PostgreSQL, where every statement is a round trip, by the statement reading a page: enrich then
   * needs no statement of its own. SQLite's pages stay plain (a second statement costs no round trip
   * there, and the store runs a page on its connection only when its plan is one index search,
   * read-costs.ts). Enrich reads the values itself for rows read any other way.
   */
  alongside?: Record<string, (table: string) => RawBuilder<unknown>>;
  /** Values a search can filter and sort on that are not columns: an SQL expression on the row. */
  searchComputed?: Record<string, { type: ValueType; expr: (table: string) => RawBuilder<unknown> }>;
  /** Route options: operations to leave out (a group's own routes replace them), texts, messages. */
  routes?: {
    omit?: CrudOp[];
    docs?: Partial<Record<CrudOp, { summary?: string; description?: string; operationId?: string }>>;
    messages?: RouteMessages;
    /** Query string of DELETE (e.g. `cascade`). */
    deleteQuery?: Record<string, TSchema>;
    /** Error statuses each operation can answer beyond the common ones. */
    errors?: Partial<Record<CrudOp, number[]>>;
  };
}

/** A defined resource: its definition, the schemas derived from it and its resolved filters. */
const idParams = (r: ResourceDefinition) =>
  Type.Object({ id: Str({ description: `Identifier of the ${r.name}`, maxLength: 64, examples: [`${r.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] }) });

export interface Resource extends ResourceDefinition {
  /** `created` is the create's answer: the record with its secret fields, which nothing else answers. */
  schemas: { record: TSchema; created: TSchema; create: TSchema; update: TSchema; query: TSchema; params: ReturnType<typeof idParams> };
  resolvedFilters: Array<{ param: string; column: string; op: FilterOp; normalize?: (value: never) => unknown; where?: FilterSpec['where'] }>;
  /** Relations of other resources to this one; filled by `linkResources` when the registry loads. */
  dependents: Array<{ resource: Resource; column: string; onDelete: 'restrict' | 'cascade' | 'set null' }>;
  /** The resource each `ref` field points at, by field name; filled by `linkResources`. */
  refTargets: Map<string, Resource>;
  /** With `associations`: the resources its records are associated with; filled by `linkResources`. */
  associationTargets: AssociationTarget[];
  /** Resources whose records are associated with this one's (their associations go with its records). */
  associatedBy: Resource[];
  /** The types of its events (resource-events.ts): `created`, `updated`, `deleted` and each action's. */
  events: ResourceEvents;
}

export const titleOf = (r: ResourceDefinition) => capitalized(r.name);
/** The name of the resource's record in the OpenAPI document: `Contact`; its other shapes add to it. */
export const componentName = (r: ResourceDefinition) => pascal(r.name);

function filterSchema(r: ResourceDefinition, param: string, spec: FilterSpec, column: string): TSchema {
  if (spec.schema) return spec.schema;
  if (spec.op === 'where') throw new Error(`${r.plural}: filter ${param} (where) needs a schema`);
  const f = r.fields[column];
  if (!f && spec.op !== 'member_of') throw new Error(`${r.plural}: filter ${param} names no field ${column}`);
  const description = spec.description ?? ({
    eq: `Only ${r.plural} whose ${column} is exactly this`,
    eq_ci: `Only ${r.plural} whose ${column} is this, ignoring case`,
    contains: `Only ${r.plural} whose ${column} contains this text, ignoring case`,
    gte: `Only ${r.plural} whose ${column} is at least this`,
    lte: `Only ${r.plural} whose ${column} is at most this`,
    lt: `Only ${r.plural} whose ${column} is before this`,
    has: `Only ${r.plural} carrying this value in ${column}`,
    member_of: `Only ${r.plural} on this list`,
  } as const)[spec.op];
  if (spec.op === 'has') return Str({ description, maxLength: 100 });
  if (spec.op === 'member_of') return Str({ description: `Only ${r.plural} on this list`, maxLength: 64, examples: ['lst_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] });
  if (f.kind === 'text' || f.kind === 'email' || f.kind === 'url' || f.kind === 'ref') {
    const examples = (f.input as { examples?: unknown[] }).examples;
    return Str({ description, maxLength: Math.max(Number((f.input as { maxLength?: number }).maxLength ?? 200), 64), ...(examples ? { examples } : {}) });
  }
  return { ...f.input, description };
}

/** Defines a resource group; see the top of this file. */
export function defineResource(definition: ResourceDefinition): Resource {
  // A stored text follows the record's own writes only: not a page of its own, the clock or associations.
  if (definition.cap && definition.hooks?.readAhead) throw new Error(`${definition.plural}: a cap counts the rows written before, which writes that read ahead together do not flush`);
  if (definition.storedJson && (definition.hooks?.list || definition.hooks?.asOf || definition.readsClock || definition.associations)) {
    throw new Error(`${definition.plural}: storedJson cannot go with hooks.list, hooks.asOf, readsClock or associations`);
  }
  if (definition.softDelete && Object.values(definition.fields).some((f) => f.unique)) throw new Error(`${definition.plural}: softDelete cannot go with unique fields, whose indexes would hold deleted records' values`);
  const custom = definition.customFields ? { ...definition, fields: { ...definition.fields, custom_fields: customFieldsField() } } : definition;
  // A lifecycle's state field comes from its declaration, in the place the definition gives it.
  const life = custom.lifecycle;
  if (life) checkLifecycle(custom);
  const r = life ? { ...custom, fields: { ...custom.fields, [stateField(life)]: stateFieldOf(life) }, hooks: lifecycleHooks(custom) } : custom;
  const writable = Object.entries(r.fields).filter(([, f]) => !f.readOnly);
  const optional = (f: Field) => Type.Optional(f.nullable ? Type.Union([f.input, Type.Null()]) : f.input);
  const create: Record<string, TSchema> = {};
  for (const [name, f] of writable) create[name] = f.required ? f.input : optional(f);
  for (const [name, schema] of Object.entries(r.inputs?.create ?? {})) create[name] = Type.Optional(schema);
  const update: Record<string, TSchema> = {};
  for (const [name, f] of writable) if (!f.createOnly) update[name] = optional(f);
  for (const [name, schema] of Object.entries(r.inputs?.update ?? {})) update[name] = Type.Optional(schema);
  if (life?.moves) update[stateField(life)] = Type.Optional(StringEnum(Object.keys(life.moves) as [string, ...string[]], { description: `Moves the ${r.name} to this state, as its action would (nothing when it is there already)` }));
  const kinds = r.associations ? associationKinds(r.plural, r.associations) : [];
  if (r.associations) {
    create.associations = Type.Optional(AssociationsInput(r.name, `The ${kindsInWords(kinds)} the record is about`, kinds));
    update.associations = Type.Optional(AssociationsInput(r.name, 'Each list given replaces the associations of its kind; kinds left out are kept', kinds));
  }
  const id = Type.String({ description: `Identifier of the ${r.name}`, examples: [`${r.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] });
  const record: Record<string, TSchema> = { id };
  const secrets: Record<string, TSchema> = {};
  for (const [name, f] of Object.entries(r.fields)) (f.secret ? secrets : record)[f.sealed?.answeredAs ?? name] = f.output;
  Object.assign(record, r.computed ?? {}, r.associations ? { associations: AssociationsOutput(r.name, kinds) } : {}, {
    created_at: Timestamp(`When the ${r.name} was created, unix seconds`),
    updated_at: Timestamp(`When the ${r.name} last changed, unix seconds`),
  });

  const recordSchema = Type.Object(record, { title: componentName(r), description: withArticle(r.name) });

  const resolvedFilters: Resource['resolvedFilters'] = [];
  const query: Record<string, TSchema> = { ...PageQuery };
  const filters: Record<string, FilterOp | FilterSpec> = { ...r.filters, ...(r.listable ? { list_id: 'member_of' } : {}), ...(r.associations ? associationFilters(r.plural, kinds) : {}) };
  for (const [param, given] of Object.entries(filters)) {
    const spec = typeof given === 'string' ? { op: given } : given;
    const column = spec.field ?? param;
    query[param] = Type.Optional(filterSchema(r, param, spec, column));
    resolvedFilters.push({ param, column, op: spec.op, normalize: spec.normalize, where: spec.where });
  }

  return {
    ...r,
    // The titles name the shapes in the OpenAPI document (`Contact`, `ContactCreate`, `ContactUpdate`).
    schemas: {
      record: recordSchema,
      created: Object.keys(secrets).length === 0 ? recordSchema
        : Type.Object({ ...record, ...secrets }, { title: `${componentName(r)}WithSecret`, description: `${capitalized(withArticle(r.name))} with its ${Object.keys(secrets).join(', ')}, shown only here` }),
      create: Type.Object(create, { additionalProperties: false, title: `${componentName(r)}Create`, description: `A new ${r.name}` }),
      update: Type.Object(update, { additionalProperties: false, title: `${componentName(r)}Update`, description: 'Fields to change; null clears a field' }),
      query: Type.Object(query, {
        additionalProperties: false,
        // `custom_fields.<name>=<value>`: records whose custom field equals the value (has it, for multi_enum).
        ...(r.customFields ? { patternProperties: { '^custom_fields\\.[a-z][a-z0-9_]{0,62}$': Str({ maxLength: 10_000, description: 'A custom field filter' }) } } : {}),
      }),
      params: idParams(r),
    },
    resolvedFilters,
    events: declareResourceEvents(r),
    dependents: [],
    refTargets: new Map(),
    associationTargets: [],
    associatedBy: [],
  };
}

/** Resolves the relations between resources (each `ref` field becomes a dependent of its target). */
export function linkResources(resources: Resource[]): void {
  for (const target of resources) {
    target.dependents.length = 0;
    target.associatedBy.length = 0;
  }
  for (const resource of resources.filter((r) => r.associations)) {
    resource.associationTargets = resolveAssociationTargets(resource, resources);
    for (const t of resource.associationTargets) t.resource.associatedBy.push(resource);
  }
  for (const resource of resources) {
    for (const [column, f] of Object.entries(resource.fields)) {
      if (!f.ref) continue;
      const target = resources.find((t) => t.table === f.ref!.table);
      if (!target) continue;
      // A cascade runs no hooks of the records it deletes: a soft-deleted record would skip its own delete.
      if (resource.softDelete && f.ref.onDelete === 'cascade') throw new Error(`${resource.plural}: a resource that soft-deletes cannot cascade from ${target.plural} (${column}): use set null or restrict`);
      target.dependents.push({ resource, column, onDelete: f.ref.onDelete });
      resource.refTargets.set(column, target);
    }
  }
}
