// The events a write records: each committed with the write, numbered in the tenant's commit order.
import type { EventType } from '../event-types.ts';
import { newId } from '../ids.ts';

/** Who makes a write: the API key and its organization (an agency's, when it acts for a client). */
export interface Actor {
  readonly keyId: string;
  readonly orgId: string;
}

export interface PendingEvent {
  id: string;
  type: EventType;
  object_id: string;
  data: string;
  previous_attributes: string | null;
  actor_key_id: string | null;
  actor_org_id: string | null;
}

/** The columns that record who made a change. */
export const actorColumns = (actor: Actor | null) => ({ actor_key_id: actor?.keyId ?? null, actor_org_id: actor?.orgId ?? null });

/** The event `<type>` for `object` (the API representation), as it is stored. */
export function pendingEvent(
  type: EventType,
  object: { readonly id: string; readonly [field: string]: unknown },
  previousAttributes: Record<string, unknown> | null | undefined,
  actor: Actor | null,
): PendingEvent {
  return {
    id: newId('evt'),
    type,
    object_id: object.id,
    data: JSON.stringify({ object }),
    previous_attributes: previousAttributes ? JSON.stringify(previousAttributes) : null,
    ...actorColumns(actor),
  };
}
