// Declared lifecycles (DESIGN 11): a resource with states names them once, with the actions that
// move a record between them. From the declaration come the action routes (lifecycle-routes.ts), the
// one refusal of an action not allowed from the record's state, the events, the `status` enum of the
// OpenAPI document, the frozen fields and the transitional states worked by a job, and the generated
// test that walks every transition (test/platform/lifecycles.test.ts).
import { sql } from 'kysely';
import type { TSchema } from 'typebox';
import type { Mode } from '../../db/schema.ts';
import { conflict } from '../errors.ts';
import type { EventType } from '../event-types.ts';
import { defineJobKind, PermanentJobError, type JobKind } from '../jobs/kinds.ts';
import { runWrite, type WriteContext } from '../write.ts';
import type { ApiRecord, Hooks, Resource, ResourceDefinition, Row } from './define.ts';
import { enumOf, type Field } from './fields.ts';
import { findRow, getRow, presentOne } from './store.ts';
import { CLEARED } from './stored-json.ts';
import { updateIn } from './tenancy.ts';
import { capitalized, withArticle } from './words.ts';

/** What an action's guard adds to the move: columns to set beside the state, members of the answer only. */
export interface ActionOutcome {
  set?: Record<string, unknown>;
  /** Added to the action's answer, never stored nor in the event (a token answered once). */
  answer?: Record<string, unknown>;
}

export interface ActionDefinition {
  /** The states the action moves a record from. */
  from: readonly string[];
  to: string;
  /** The event's suffix: `sent` records `quote.sent`. The action's name unless given. */
  event?: string;
  eventDescription: string;
  /** How the refusal names the action: `A quote that is accepted cannot be <participle>`; the event's suffix, in words, unless given. */
  participle?: string;
  summary: string;
  description: string;
  /** Fields set to the time of the move (`sent_at`). */
  stamps?: readonly string[];
  /**
   * Checks the move, after its state was found allowed, and does the work that goes with it in the
   * same transaction; throws its own refusals (a 400, a 402, a 409 naming what is missing).
   */
  guard?(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome | void>;
  /** The request body of the route, when the action takes one. */
  body?: TSchema;
  /** False: no route (the action is taken by a public link or a job, through `runAction`). */
  route?: false;
  operationId?: string;
  /** Statuses the route can answer beyond 404 and 409. */
  errors?: number[];
}

/** A transitional state: a job does its work and commits the next state. */
export interface WorkedState {
  next: string;
  /** The event's suffix when the work is done; the next state's name unless given. */
  event?: string;
  eventDescription: string;
  /** The work, in the transaction that commits the next state; may set columns beside it. */
  work?(w: WriteContext, row: Row): Promise<Record<string, unknown> | void>;
}

export interface LifecycleDefinition {
  /** The column holding the state: `status` unless given. */
  field?: string;
  states: readonly string[];
  /** The state of a new record. */
  initial: string;
  /** The description of the state field. */
  description: string;
  actions: Record<string, ActionDefinition>;
  /** Fields an update may not change in a state (`'*'`: every field): 409. */
  frozen?: Partial<Record<string, readonly string[] | '*'>>;
  /** Transitional states: a record in one is written by its job only (any other write is 409). */
  working?: Record<string, WorkedState>;
  /** The state as of `now`, when the clock moves it (a quote past its date reads as expired). */
  stateOf?(row: Record<string, unknown>, now: number): string;
  /**
   * States an update may name in the state field (`PATCH {"status": "paused"}`), each with the action
   * that leads there: the update takes that action (nothing when the record is in the state already),
   * then writes its other fields.
   */
  moves?: Record<string, string>;
}

export const stateField = (life: LifecycleDefinition) => life.field ?? 'status';
export const eventSuffix = (name: string, action: ActionDefinition) => action.event ?? name.replaceAll('-', '_');
const participleOf = (name: string, action: ActionDefinition) => action.participle ?? eventSuffix(name, action).replaceAll('_', ' ');
/** `A quote`, `An enrollment`: how a refusal names the record. */
const aRecord = (r: ResourceDefinition) => capitalized(withArticle(r.name));

/** The state a record is in now. */
export function stateNow(r: ResourceDefinition, row: Record<string, unknown>, now: number): string {
  const life = r.lifecycle!;
  return life.stateOf ? life.stateOf(row, now) : String(row[stateField(life)]);
}

/** The one refusal of an action from a state it does not leave from. */
export const refusal = (r: ResourceDefinition, state: string, participle: string) =>
  conflict(`${aRecord(r)} that is ${state} cannot be ${participle}`);

/** The state field, derived from the declaration: its enum, default and description. */
export function stateFieldOf(life: LifecycleDefinition): Field {
  return enumOf(life.states, { readOnly: true, nullable: false, default: life.initial, description: life.description, example: life.initial });
}

/**
 * Hooks that refuse an update of a frozen field, and any write to a record in a transitional state,
 * before the group's own hooks run.
 */
export function lifecycleHooks(r: ResourceDefinition): Hooks {
  const life = r.lifecycle!;
  const hooks = r.hooks ?? {};
  const working = (row: Row, what: string) => {
    const state = String(row[stateField(life)]);
    if (life.working?.[state]) throw conflict(`${aRecord(r)} that is ${state} cannot be ${what} until its work is done`);
    return state;
  };
  return {
    ...hooks,
    async beforeWrite(w, row, ctx) {
      if (ctx.before) {
        const state = working(ctx.before, 'changed');
        const frozen = life.frozen?.[state];
        const touched = Object.keys(ctx.input).filter((name) => r.fields[name] && (frozen === '*' || frozen?.includes(name)));
        if (touched.length > 0) throw conflict(`${aRecord(r)} that is ${state} cannot be changed: ${touched.join(', ')} ${touched.length === 1 ? 'is' : 'are'} frozen`);
      }
      await hooks.beforeWrite?.(w, row, ctx);
    },
    async beforeDelete(w, row, query) {
      working(row, 'deleted');
      await hooks.beforeDelete?.(w, row, query);
    },
  };
}

interface WorkPayload {
  resource: string;
  id: string;
  state: string;
}

const WORK: JobKind<WorkPayload> = { name: 'lifecycle.work', run: () => Promise.reject(new Error('lifecycle.work runs through workStates(resources)')) };

/**
 * The job kind working the transitional states of `resources` (listed with the job kinds): it does a
 * record's work and commits the next state. The queue knows kinds by name, so a write enqueues
 * `WORK`, the kind's name, without the resources.
 */
export const workStates = (resources: Resource[]) => defineJobKind<WorkPayload>({
  name: WORK.name,
  async run(payload, { database, job }) {
    const r = resources.find((x) => x.plural === payload.resource);
    if (!r?.lifecycle?.working?.[payload.state]) throw new PermanentJobError(`No ${payload.resource} works a state ${payload.state}`);
    await runWrite(database, { orgId: job.orgId, mode: job.mode as Mode }, (w) => finishWork(r, w, payload.id, payload.state));
  },
});

/** Does the work of `state` and commits the next state, unless the record left it (a job runs at least once). */
export async function finishWork(r: Resource, w: WriteContext, id: string, state: string): Promise<ApiRecord | undefined> {
  const row = await findRow(r, w.tx, w.dialect, w.scope, id);
  const step = r.lifecycle!.working![state];
  if (!row || String(row[stateField(r.lifecycle!)]) !== state) return undefined;
  const set = (await step.work?.(w, row)) ?? {};
  return (await commitMove(r, w, row, { ...set, [stateField(r.lifecycle!)]: step.next }, r.events[`${state}:done`], state)).record;
}

/** Writes a move: the row, its event (with the earlier values of what changed) and the job of a transitional state. */
async function commitMove(r: Resource, w: WriteContext, row: Row, changes: Record<string, unknown>, event: EventType, from: string) {
  const life = r.lifecycle!;
  // A record kept as JSON text (stored-json.ts) is written again by its job after any move.
  await updateIn(w.tx, r.table, w.scope).set({ ...changes, updated_at: w.now, ...(r.storedJson ? CLEARED : {}) } as never).where(sql.ref('id'), '=', row.id).execute();
  const after = { ...row, ...changes, updated_at: w.now } as Row;
  const record = await presentOne(r, w.tx, w.scope, after);
  const previous = Object.fromEntries(Object.keys(changes).map((k) => [k, r.fields[k] ? r.fields[k].fromRow(row[k]) : row[k]]));
  w.emit(event, record, { ...previous, [stateField(life)]: from });
  const to = String(changes[stateField(life)]);
  if (life.working?.[to]) w.enqueue(WORK, { resource: r.plural, id: row.id, state: to });
  return { record, row: after };
}

/**
 * Takes action `name` on a record (its id, or its row already read in this write): 409 unless the
 * record's state is one the action leaves from, then the guard, the move and its event. A record the
 * clock already shows in the action's target state (`stateOf`) is recorded so from its stored state.
 */
export async function performAction(r: Resource, w: WriteContext, target: string | Row, name: string, input: Record<string, unknown> = {}): Promise<{ record: ApiRecord; row: Row }> {
  const life = r.lifecycle!;
  const action = life.actions[name];
  const row = typeof target === 'string' ? await getRow(r, w.tx, w.dialect, w.scope, target) : target;
  const stored = String(row[stateField(life)]);
  const state = stateNow(r, row, w.now);
  const recording = state === action.to && state !== stored && action.from.includes(stored);
  if (!action.from.includes(state) && !recording) throw refusal(r, state, participleOf(name, action));
  const outcome = (await action.guard?.(w, row, input)) ?? {};
  const stamps = Object.fromEntries((action.stamps ?? []).map((f) => [f, w.now]));
  const moved = await commitMove(r, w, row, { ...outcome.set, ...stamps, [stateField(life)]: action.to }, r.events[name], recording ? stored : state);
  return { record: { ...moved.record, ...outcome.answer }, row: moved.row };
}

/**
 * The part of an update that names a state of the lifecycle's `moves`: takes its action from the
 * record's state (none when it is there already) and answers the rest of the update.
 */
export async function updateMove(r: Resource, w: WriteContext, id: string, given: Record<string, unknown>): Promise<Record<string, unknown>> {
  const life = r.lifecycle;
  if (!life?.moves || given[stateField(life)] === undefined) return given;
  const { [stateField(life)]: target, ...rest } = given;
  const row = await getRow(r, w.tx, w.dialect, w.scope, id);
  if (stateNow(r, row, w.now) !== target) await performAction(r, w, row, life.moves[String(target)]);
  return rest;
}

/** `performAction`, answering the record as the API shows it. */
export const runAction = async (r: Resource, w: WriteContext, target: string | Row, name: string, input: Record<string, unknown> = {}): Promise<ApiRecord> =>
  (await performAction(r, w, target, name, input)).record;

/** The events of a lifecycle, by key (an action's name; `<state>:done` for a worked state), with their types and descriptions. */
export function lifecycleEvents(r: ResourceDefinition): Record<string, { type: string; description: string }> {
  const life = r.lifecycle;
  if (!life) return {};
  const events: Record<string, { type: string; description: string }> = {};
  for (const [name, action] of Object.entries(life.actions)) events[name] = { type: `${r.name}.${eventSuffix(name, action)}`, description: action.eventDescription };
  for (const [state, step] of Object.entries(life.working ?? {})) events[`${state}:done`] = { type: `${r.name}.${step.event ?? step.next}`, description: step.eventDescription };
  return events;
}

/** Checks a declaration once, when the resource is defined: every state named is declared. */
export function checkLifecycle(r: ResourceDefinition): void {
  const life = r.lifecycle!;
  const known = (state: string, where: string) => {
    if (!life.states.includes(state)) throw new Error(`${r.plural}: ${where} names ${state}, which is not among its states`);
  };
  known(life.initial, 'initial');
  for (const [name, a] of Object.entries(life.actions)) for (const s of [...a.from, a.to]) known(s, `action ${name}`);
  for (const [state, step] of Object.entries(life.working ?? {})) for (const s of [state, step.next]) known(s, `working state ${state}`);
  for (const [state, action] of Object.entries(life.moves ?? {})) {
    known(state, 'moves');
    if (life.actions[action]?.to !== state) throw new Error(`${r.plural}: moves names ${action} for ${state}, which is no action leading there`);
  }
}
