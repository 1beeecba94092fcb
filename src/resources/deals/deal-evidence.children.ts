// Evidence on a deal as children of the deal (platform/resource/children.ts): recorded by key of the
// evidence library (`POST /v1/deals/{id}/evidence`, 201 new or 200 recorded again), listed and
// removed. Apart from deal-evidence.ts, which the deal's store imports: a definition needs the deal's
// at once, the store's functions later.
import { Type } from 'typebox';
import { validationError } from '../../platform/errors.ts';
import { defineChildren } from '../../platform/resource/children.ts';
import { text } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { KEY_PATTERN } from '../checklists/checklists.schemas.ts';
import { libraryMap } from '../checklists/evidence-library.ts';
import { deals } from './deals.resource.ts';

export const dealEvidence = defineChildren({
  parent: deals, name: 'evidence', path: 'evidence', table: 'deal_evidence', parentColumn: 'deal_id',
  key: {
    column: 'key',
    schema: Type.String({ description: 'The evidence key (of the evidence library)', examples: ['budget_confirmed'] }),
    input: Type.String({ pattern: KEY_PATTERN, maxLength: 63, description: 'A key of the evidence library (`GET /v1/pipelines/evidence-library`); unknown: 422 naming it', examples: ['budget_confirmed'] }),
    param: Str({ description: 'The evidence key', maxLength: 63, examples: ['budget_confirmed'] }),
  },
  fields: {
    note: text({ max: 2000, description: 'What was learned, in words', example: 'CFO approved 120k for this fiscal year' }),
    source: text({ max: 200, description: 'Where it came from: a call, an e-mail, a document, …', example: 'call' }),
  },
  computed: { title: Type.String({ description: 'Title of the key in the library', examples: ['Budget confirmed'] }) },
  write: 'post',
  notFound: 'Evidence not found on this deal',
  members: { event: 'evidence', removed: 'key', removedEvent: 'evidence_key' },
  description: 'Evidence on a deal',
  timestamps: { created: 'When the evidence was first recorded, unix seconds', updated: 'When its note or source last changed, unix seconds' },
  docs: {
    list: { summary: 'List the evidence on a deal', description: 'The evidence on the deal, by key (last first), with an exact `total`. Unknown deal: 404 `Deal not found`.' },
    write: {
      summary: 'Record evidence on a deal',
      description: 'Records evidence of a key of the evidence library on the deal (201, `deal.evidence_added`), or replaces the note and source of evidence it has (200, `deal.evidence_updated`). An unknown key is 422 naming it; unknown deal: 404 `Deal not found`.',
    },
    delete: { summary: 'Remove evidence from a deal', description: 'Takes the evidence of `key` off the deal (`deal.evidence_removed`); the deal stays in its stage. Not on the deal: 404 `Evidence not found on this deal`.' },
  },
  hooks: {
    async beforeWrite(w, input) {
      const key = String(input.key);
      if (!(await libraryMap(w.tx, w.scope)).has(key)) {
        throw validationError([{ loc: ['body', 'key'], msg: `unknown evidence key ${key}: not in the evidence library (GET /v1/pipelines/evidence-library)`, type: 'value_error.evidence_key' }]);
      }
    },
    async enrich(db, scope, rows, records) {
      const library = await libraryMap(db, scope);
      for (const record of records) record.title = library.get(String(record.key))?.title ?? String(record.key);
    },
  },
});
