// The events of a resource, derived from its definition and declared in the catalog when it is
// defined: `<name>.created|updated|deleted`, those of its lifecycle's actions and worked states. A
// definition can say more about one of them (`eventDocs`) but cannot forget any.
import { declareEventTypes, type EventType } from '../event-types.ts';
import type { ResourceDefinition } from './define.ts';
import { lifecycleEvents } from './lifecycle.ts';

export type CrudEvent = 'created' | 'updated' | 'deleted';

/** The types of a resource's events: by kind of write (`created`, …), by action name, and `<state>:done`. */
export type ResourceEvents = Record<CrudEvent, EventType> & Record<string, EventType>;

const article = (s: string) => (/^[aeiou]/i.test(s) ? 'An' : 'A');

export function declareResourceEvents(r: ResourceDefinition): ResourceEvents {
  const a = `${article(r.name)} ${r.name}`;
  const generated: Record<CrudEvent, string> = {
    created: `${a} was created`,
    updated: `${a} was changed; \`previous_attributes\` holds the earlier values`,
    deleted: `${a} was deleted; the object is the ${r.name} as it was`,
  };
  const kinds = r.crudEvents ?? (Object.keys(generated) as CrudEvent[]);
  const crud = Object.fromEntries(kinds.map((k) => [k, { type: `${r.name}.${k}`, description: r.eventDocs?.[k] ?? generated[k] }]));
  return declareEventTypes({ ...crud, ...lifecycleEvents(r) }) as ResourceEvents;
}
