// Associations of records with contacts, companies and deals, for every resource whose definition
// names the kinds it associates with (`associations: ['contacts', 'companies', 'deals']` for tasks and
// notes): one shared table `record_associations` of (record, associated record). On write every associated record must exist in the tenant (404 naming its
// kind otherwise); when a contact, company or deal is deleted its associations go with it, and the
// records that had them stay (they simply no longer list it).
import { sql, type Kysely, type SqlBool } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { notFound } from '../errors.ts';
import { Str } from '../schemas.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';
import type { FilterSpec, Resource } from './define.ts';
import { recordsIn } from './soft-delete.ts';
import { deleteIn, selectIn, tenantOf } from './tenancy.ts';

/** The kinds of record a record can be associated with: its key in `associations`, its filter, its table. */
export const ASSOCIATION_KINDS = [
  { key: 'contact_ids', param: 'contact_id', table: 'contacts', prefix: 'con', name: 'contact' },
  { key: 'company_ids', param: 'company_id', table: 'companies', prefix: 'cmp', name: 'company' },
  { key: 'deal_ids', param: 'deal_id', table: 'deals', prefix: 'dea', name: 'deal' },
] as const;

export type AssociationKind = (typeof ASSOCIATION_KINDS)[number];
/** A kind as a definition names it: the plural of its resource (`contacts`). */
export type AssociationKindName = AssociationKind['table'];
export type AssociationKey = AssociationKind['key'];
export type Associations = Partial<Record<AssociationKey, string[]>>;
export interface AssociationTarget { kind: AssociationKind; resource: Resource }

/** The kinds a definition names, in its order; each once, at least one. */
export function associationKinds(plural: string, names: readonly AssociationKindName[]): AssociationKind[] {
  if (names.length === 0 || new Set(names).size !== names.length) throw new Error(`${plural}: associations names each kind once, at least one`);
  return names.map((name) => ASSOCIATION_KINDS.find((k) => k.table === name) ?? fail(`${plural}: no association kind ${name}`));
}

const fail = (message: string): never => { throw new Error(message); };

/** `contacts, companies and deals`: the kinds in words, for descriptions. */
export const kindsInWords = (kinds: readonly AssociationKind[]) =>
  kinds.length === 1 ? kinds[0].table : `${kinds.slice(0, -1).map((k) => k.table).join(', ')} and ${kinds.at(-1)!.table}`;

/** At most this many records of each kind per record. */
const MAX_PER_KIND = 100;

const ids = (kind: AssociationKind, description: string) => Type.Array(
  Str({ description: `Identifier of a ${kind.name}`, maxLength: 64, examples: [`${kind.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] }),
  { maxItems: MAX_PER_KIND, description, examples: [[`${kind.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`]] },
);

export const AssociationsInput = (name: string, description: string, kinds: readonly AssociationKind[]) => Type.Object(
  Object.fromEntries(kinds.map((k) => [k.key, Type.Optional(ids(k, `The ${k.table} the ${name} is about (at most ${MAX_PER_KIND}; repeats count once); an unknown one is 404 \`${k.name[0].toUpperCase()}${k.name.slice(1)} not found\``))])),
  { additionalProperties: false, description },
);

export const AssociationsOutput = (name: string, kinds: readonly AssociationKind[]) => Type.Object(
  Object.fromEntries(kinds.map((k) => [k.key, ids(k, `The ${k.table} the ${name} is about, by id`)])),
  { description: `The ${kindsInWords(kinds)} the ${name} is about; a deleted record leaves them` },
);

const empty = (kinds: readonly AssociationKind[]): Associations => Object.fromEntries(kinds.map((k) => [k.key, []]));

/** The condition "the row of `table` is associated with `targetId`", for the association filters. */
export const associatedWith = (table: string, targetId: string) =>
  sql<SqlBool>`exists (select 1 from record_associations a where a.org_id = ${sql.ref(`${table}.org_id`)} and a.mode = ${sql.ref(`${table}.mode`)} and a.target_id = ${targetId} and a.record_id = ${sql.ref(`${table}.id`)})`;

/** The filters of a resource with associations, one per kind: `contact_id`, `company_id`, `deal_id`. */
export function associationFilters(plural: string, kinds: readonly AssociationKind[]): Record<string, FilterSpec> {
  return Object.fromEntries(kinds.map((k) => [k.param, {
    op: 'where', where: associatedWith,
    schema: Str({ description: `Only ${plural} associated with this ${k.name}`, maxLength: 64, examples: [`${k.prefix}_01JD8X4M6R2T9Q3V5W7Y8Z0A1B`] }),
  } satisfies FilterSpec]));
}

/** The resources of each of `r`'s association kinds among the registry's. */
export function resolveAssociationTargets(r: Resource, resources: Resource[]): AssociationTarget[] {
  return associationKinds(r.plural, r.associations ?? []).map((kind) => {
    const resource = resources.find((r) => r.table === kind.table);
    if (!resource) throw new Error(`Associations need the ${kind.table} resource in the registry`);
    return { kind, resource };
  });
}

/**
 * Stores the associations given for a record (each kind given replaces that kind's), after checking
 * in one query per kind that every associated record exists in the tenant.
 */
export async function writeAssociations(r: Resource, w: WriteContext, recordId: string, given: Partial<Associations> | undefined): Promise<void> {
  for (const { kind, resource } of r.associationTargets) {
    const wanted = given?.[kind.key];
    if (wanted === undefined) continue;
    const unique = [...new Set(wanted)];
    if (unique.length > 0) {
      const found = await recordsIn(resource, w.tx, w.scope).select(sql.ref('id').as('id')).where(sql.ref('id'), 'in', unique).execute();
      if (found.length < unique.length) throw notFound(resource.notFound);
    }
    await deleteIn(w.tx, 'record_associations', w.scope).where('record_id', '=', recordId).where('target', '=', kind.table).execute();
    if (unique.length === 0) continue;
    await w.tx.insertInto('record_associations')
      .values(unique.map((target_id) => ({ ...tenantOf(w.scope), record_id: recordId, target: kind.table, target_id, created_at: w.now })))
      .execute();
  }
}

/**
 * The associations of records, by record id (every record of `recordIds` has an entry, with a list
 * for each of the resource's `kinds`, all of them when not given).
 */
export async function loadAssociations(db: Kysely<DB>, scope: Scope, recordIds: string[], kinds: readonly AssociationKindName[] = ASSOCIATION_KINDS.map((k) => k.table)): Promise<Map<string, Associations>> {
  const out = new Map(recordIds.map((id) => [id, empty(associationKinds('associations', kinds))]));
  if (recordIds.length === 0) return out;
  const rows = await selectIn(db, 'record_associations', scope).select(['record_id', 'target', 'target_id'])
    .where('record_id', 'in', recordIds).orderBy('target_id').execute();
  for (const row of rows) {
    const kind = ASSOCIATION_KINDS.find((k) => k.table === row.target);
    out.get(row.record_id)![kind?.key as AssociationKey]?.push(row.target_id);
  }
  return out;
}

/** A deleted record's own associations go with it. */
export async function dropAssociationsOf(w: WriteContext, recordId: string): Promise<void> {
  await deleteIn(w.tx, 'record_associations', w.scope).where('record_id', '=', recordId).execute();
}

/** Deleted contacts, companies or deals (ids, or a query of them) leave every record associated with them. */
export async function dropAssociationsTo(w: WriteContext, targetIds: string[] | ReturnType<typeof selectIn>): Promise<void> {
  if (Array.isArray(targetIds) && targetIds.length === 0) return;
  await deleteIn(w.tx, 'record_associations', w.scope).where('target_id', 'in', targetIds as never).execute();
}
