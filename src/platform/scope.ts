import type { Mode } from '../db/schema.ts';

/** The tenant a request acts for: taken from the credential, a required argument of every store function. */
export interface Scope {
  readonly orgId: string;
  readonly mode: Mode;
}
