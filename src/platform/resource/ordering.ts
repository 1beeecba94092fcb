// Ordered children (the stages of a pipeline): checking a new order and writing it. An order names
// every child once: an id that is none of them is 404, one left out or named twice is 400.
import { badRequest, notFound } from '../errors.ts';
import type { WriteContext } from '../write.ts';
import { updateIn } from './tenancy.ts';

export function checkOrder(known: string[], given: string[], notFoundMessage = 'Stage not found'): void {
  const ids = new Set(known);
  if (!given.every((id) => ids.has(id))) throw notFound(notFoundMessage);
  if (new Set(given).size !== given.length || given.length !== known.length) {
    throw badRequest('stage_ids must name every stage of the pipeline exactly once', 'stage_ids');
  }
}

/** Gives the rows of `ids` the positions 0, 1, … in that order. */
export async function renumber(w: WriteContext, table: 'deal_stages' | 'checklist_stages', ids: string[]): Promise<void> {
  for (const [position, id] of ids.entries()) {
    await updateIn(w.tx, table, w.scope).set({ position, updated_at: w.now }).where('id', '=', id).execute();
  }
}
