// A step as it is sent to one contact: the version the enrollment is given (the step or one of its
// A/B variants, by weight, the same every time it is asked) rendered with the contact's values, a
// mailbox's signature below an e-mail's text, and a same-thread step without a subject answering the
// thread's first message. The scheduler sends it; the preview route shows it.
import { createHash } from 'node:crypto';
import { renderTemplate } from '../../platform/templates/liquid.ts';
import type { Step } from './steps.store.ts';

/** The step's subject and body, or one of its variants, chosen by weight for the enrollment and kept: the same every time it is asked. */
export function versionOf(step: Step, enrollmentId: string): { subject: string | null; body: string | null } {
  if (step.variants.length === 0) return step;
  const weights = [1, ...step.variants.map((v) => v.weight)];
  const total = weights.reduce((a, b) => a + b, 0);
  let pick = createHash('sha256').update(`${enrollmentId}:${step.id}`).digest().readUInt32BE(0) % total;
  for (const [i, weight] of weights.entries()) {
    if (pick < weight) return i === 0 ? step : { subject: step.variants[i - 1].subject ?? step.subject, body: step.variants[i - 1].body };
    pick -= weight;
  }
  return step;
}

export interface RenderedStep { subject: string; text: string }

/**
 * The step for the enrollment (`versionKey`: its id) rendered with `values`: its subject (none for a
 * text; `firstSubject`, the thread's first message's, answered when it renders empty) and its text
 * (an e-mail's with `signature` below). Throws what the template throws.
 */
export function renderStep(step: Step, versionKey: string, values: Record<string, unknown>, options: { signature?: string | null; firstSubject?: string } = {}): RenderedStep {
  const version = versionOf(step, versionKey);
  const text = renderTemplate(version.body ?? '', values);
  if (step.step_type === 'SMS') return { subject: '', text };
  let subject = renderTemplate(version.subject ?? '', values).trim();
  if (!subject && options.firstSubject) subject = /^re:/i.test(options.firstSubject) ? options.firstSubject : `Re: ${options.firstSubject}`;
  return { subject, text: options.signature ? `${text}\n\n-- \n${options.signature}` : text };
}
