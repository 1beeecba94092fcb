// The evidence library: the keys a methodology's stages require or recommend and a deal's evidence
// names. The canonical keys are built in (the same for every organization); an organization adds its
// own (`evidence_keys`). A key unknown to both is refused wherever it is named, with its place.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { conflict, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { selectIn, tenantOf } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import type { WriteContext } from '../../platform/write.ts';

export interface EvidenceKey { key: string; title: string; description: string | null; built_in: boolean }

const canonical = (key: string, title: string, description: string): EvidenceKey => ({ key, title, description, built_in: true });

/** The built-in keys, in the order the library lists them. */
export const CANONICAL_KEYS: readonly EvidenceKey[] = [
  canonical('pain_identified', 'Pain identified', 'The business problem the buyer needs solved is named and confirmed by the buyer'),
  canonical('budget_confirmed', 'Budget confirmed', 'Money for the purchase exists or is being allocated, and its size is known'),
  canonical('timeline_known', 'Timeline known', 'When the buyer must decide or go live, and why then'),
  canonical('decision_maker_identified', 'Decision maker identified', 'The person who signs (the economic buyer) is known by name'),
  canonical('champion_identified', 'Champion identified', 'Someone inside the account sells for us when we are not in the room'),
  canonical('decision_criteria_known', 'Decision criteria known', 'The technical and business criteria the buyer will judge options by'),
  canonical('decision_process_known', 'Decision process known', 'The steps, people and approvals between now and a signed decision'),
  canonical('competition_known', 'Competition known', 'The alternatives the buyer weighs, including doing nothing'),
  canonical('success_criteria_agreed', 'Success criteria agreed', 'What the buyer will measure to call the purchase a success, agreed with them'),
  canonical('procurement_process_known', 'Procurement process known', 'Legal, security and purchasing steps to a signed contract, with their owners'),
  canonical('metrics_quantified', 'Metrics quantified', 'The economic impact of solving the pain, in the buyer\'s numbers'),
  canonical('impact_quantified', 'Impact quantified', 'The cost of the problem and the value of solving it, agreed with the buyer'),
  canonical('critical_event_known', 'Critical event known', 'The event that forces a decision by a date'),
  canonical('situation_understood', 'Situation understood', 'The buyer\'s current set-up, team and tools are understood'),
  canonical('need_confirmed', 'Need confirmed', 'The buyer confirms they need a solution like ours'),
];

const CANONICAL = new Map(CANONICAL_KEYS.map((k) => [k.key, k]));

/** Every key of the tenant's library: the built-in ones, then its own oldest first. */
export async function evidenceLibrary(db: Kysely<DB>, scope: Scope): Promise<EvidenceKey[]> {
  const own = await selectIn(db, 'evidence_keys', scope).selectAll().orderBy('id').execute();
  return [...CANONICAL_KEYS, ...own.map((k) => ({ key: k.key, title: k.title, description: k.description, built_in: false }))];
}

/** The library as a map from key to entry. */
export async function libraryMap(db: Kysely<DB>, scope: Scope): Promise<Map<string, EvidenceKey>> {
  return new Map((await evidenceLibrary(db, scope)).map((k) => [k.key, k]));
}

/** A key named in a request, at its place in the body. */
export interface NamedKey { loc: Array<string | number>; key: string }

/** The keys of an array member of the body, each at its index. */
export const keysAt = (loc: Array<string | number>, keys: readonly string[] | undefined): NamedKey[] => (keys ?? []).map((key, i) => ({ loc: [...loc, i], key }));

/** 422 naming each key that is not in the library, at its place in the body. */
export async function checkKeys(db: Kysely<DB>, scope: Scope, named: NamedKey[]): Promise<void> {
  if (named.length === 0) return;
  const library = await libraryMap(db, scope);
  const errors = named.filter((n) => !library.has(n.key)).map((n) => ({
    loc: ['body', ...n.loc.map(String)],
    msg: `unknown evidence key ${n.key}: not in the evidence library (GET /v1/pipelines/evidence-library)`,
    type: 'value_error.evidence_key',
  }));
  if (errors.length > 0) throw validationError(errors);
}

/** Adds a key of the organization's own; a key the library already has is 409. */
export async function addEvidenceKey(w: WriteContext, input: { key: string; title: string; description?: string | null }): Promise<EvidenceKey> {
  if (CANONICAL.has(input.key)) throw conflict(`Evidence key ${input.key} is a built-in key of the library`);
  const taken = await selectIn(w.tx, 'evidence_keys', w.scope).select('id').where('key', '=', input.key).executeTakeFirst();
  if (taken) throw conflict(`Evidence key ${input.key} already exists`);
  const row = { ...tenantOf(w.scope), id: newId('evk'), key: input.key, title: input.title, description: input.description ?? null, created_at: w.now, updated_at: w.now };
  await w.tx.insertInto('evidence_keys').values(row).execute();
  const key = { key: row.key, title: row.title, description: row.description, built_in: false };
  w.emit('evidence_key.created', { id: row.id, ...key });
  return key;
}
