// A sequence's steps as the scheduler and the checks read them, and the rules of a step's write: the
// sequence must not be in a transitional state, an SMS step is a body and no subject, templates are
// checked against the variables messages will have, and `step_order` stays 1, 2, 3 … whatever is
// added, moved or removed.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { conflict } from '../../platform/errors.ts';
import { SMS_MAX_LENGTH } from '../../platform/providers/sms/local.ts';
import { definitionsIn } from '../../platform/resource/custom-fields.ts';
import type { ChildRow } from '../../platform/resource/children.ts';
import type { Row } from '../../platform/resource/define.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { checkTemplates } from '../../platform/templates/liquid.ts';
import { fieldError } from '../../platform/time/zones.ts';
import type { WriteContext } from '../../platform/write.ts';
import { MAX_STEPS, type StepType, type StepVariant } from './sequences.schemas.ts';
import { stepVariableCheck } from './template-values.ts';

export interface Step {
  id: string;
  step_order: number;
  step_type: StepType;
  input_type: 'TEMPLATE' | 'ON_DEMAND';
  time_interval: number;
  subject: string | null;
  body: string | null;
  variants: StepVariant[];
}

const stepOf = (r: Record<string, unknown>): Step => ({
  id: String(r.id), step_order: Number(r.step_order), step_type: r.step_type as StepType, input_type: r.input_type as Step['input_type'],
  time_interval: Number(r.time_interval), subject: (r.subject as string | null) ?? null, body: (r.body as string | null) ?? null,
  variants: parseJson<StepVariant[]>(r.variants ?? '[]'),
});

/** The steps of a sequence in order. */
export async function stepsOf(db: Kysely<DB>, scope: Scope, sequenceId: string): Promise<Step[]> {
  const rows = await selectIn(db, 'sequence_steps', scope).selectAll().where('sequence_id', '=', sequenceId).orderBy('step_order').orderBy('id').execute();
  return rows.map(stepOf);
}

const WORKING = new Set(['scheduling', 'pausing', 'resuming', 'terminating']);

/** The contacts' custom fields a template may name. */
const customFieldNames = async (w: WriteContext) => new Set((await definitionsIn(w, 'contacts')).map((d) => d.name));

/** A text has a body and no subject, is sent by the sequence (a text by hand is a TASK step) and fits what gateways take. */
function checkSms(step: Record<string, unknown>, variants: readonly StepVariant[]): void {
  if (step.input_type === 'ON_DEMAND') throw fieldError('input_type', 'An SMS step is sent by the sequence: use a TASK step for a text to send by hand');
  if (step.subject) throw fieldError('subject', 'An SMS step has no subject: leave it out or null');
  if (typeof step.body !== 'string' || !step.body.trim()) throw fieldError('body', 'An SMS step needs a body: the text to send');
  for (const [field, body] of [['body', step.body], ...variants.map((v, i) => [`variants.${i}.body`, v.body])]) {
    if (body.length > SMS_MAX_LENGTH) throw fieldError(field, `An SMS step's text is at most ${SMS_MAX_LENGTH} characters, what gateways take`);
  }
  const titled = variants.findIndex((v) => v.subject);
  if (titled >= 0) throw fieldError(`variants.${titled}.subject`, 'An SMS step has no subject: leave it out or null');
}

/** Checks a step about to be written and places it: the others move to make room at its `step_order`. */
export async function beforeStepWrite(w: WriteContext, input: Record<string, unknown>, { parent, existing }: { parent: Row; existing?: ChildRow }): Promise<void> {
  const state = String(parent.status);
  if (WORKING.has(state)) throw conflict(`A sequence that is ${state} cannot be changed until its work is done`);
  if (state === 'completed') throw conflict('A sequence that is completed cannot be changed');
  const merged = { ...existing, ...input } as Record<string, unknown>;
  const variants = (input.variants as StepVariant[] | undefined) ?? [];
  if (merged.step_type === 'SMS') checkSms(merged, input.variants === undefined ? parseJson<StepVariant[]>(merged.variants ?? '[]') : variants);
  if (input.variants !== undefined) input.variants = variants.map((v) => ({ subject: v.subject ?? null, body: v.body, weight: v.weight }));
  checkTemplates({
    subject: input.subject as string | null | undefined, body: input.body as string | null | undefined,
    ...Object.fromEntries(variants.flatMap((v, i) => [[`variants.${i}.subject`, v.subject], [`variants.${i}.body`, v.body]])),
  }, stepVariableCheck(await customFieldNames(w)));
  const count = Number((await selectIn(w.tx, 'sequence_steps', w.scope).select((eb) => eb.fn.countAll<number>().as('n')).where('sequence_id', '=', parent.id).executeTakeFirstOrThrow()).n);
  if (!existing && count >= MAX_STEPS) throw conflict(`A sequence has at most ${MAX_STEPS} steps`);
  const last = existing ? count : count + 1;
  const wanted = input.step_order === undefined ? (existing ? Number(existing.step_order) : last) : Math.min(Number(input.step_order), last);
  input.step_order = wanted;
  const from = existing ? Number(existing.step_order) : last;
  if (existing && wanted === from) return;
  const others = () => updateIn(w.tx, 'sequence_steps', w.scope).where('sequence_id', '=', parent.id);
  if (!existing || wanted < from) {
    let moved = others().set({ step_order: sql`step_order + 1`, updated_at: w.now }).where('step_order', '>=', wanted);
    if (existing) moved = moved.where('step_order', '<', from);
    await moved.execute();
  } else {
    await others().set({ step_order: sql`step_order - 1`, updated_at: w.now }).where('step_order', '>', from).where('step_order', '<=', wanted).execute();
  }
}

/** Numbers the steps 1, 2, 3 … again in their order (after one was removed, or a reorder). */
export async function renumber(w: WriteContext, sequenceId: string, order?: readonly string[]): Promise<void> {
  const steps = await stepsOf(w.tx, w.scope, sequenceId);
  const ids = order ?? steps.map((s) => s.id);
  for (const [i, id] of ids.entries()) {
    if (steps.find((s) => s.id === id)?.step_order === i + 1) continue;
    await updateIn(w.tx, 'sequence_steps', w.scope).set({ step_order: i + 1, updated_at: w.now }).where('id', '=', id).execute();
  }
}
