// Voice numbers: the numbers an organization calls from, each with the telephony connection its
// calls go through (null: the organization's default connection, else the operator's
// TELEPHONY_PROVIDER; test mode always the local driver). Stored in E.164 form.
import { defineResource } from '../../platform/resource/define.ts';
import { ref, text } from '../../platform/resource/fields.ts';
import { storePhoneIn } from '../../platform/phone-region.ts';
import { checkConnectionKind } from './voice.store.ts';

export const voiceNumbers = defineResource({
  name: 'voice_number', plural: 'numbers', prefix: 'vnum', table: 'voice_numbers', notFound: 'Voice number not found',
  tag: 'Voice numbers', tagDescription: 'The numbers an organization calls from, with the telephony provider each goes through',
  fields: {
    phone_number: text({ required: true, unique: true, createOnly: true, min: 3, max: 50, description: 'The number, in E.164 form (written any way a person writes it, a national number in the organization\'s `phone_region`: stored as `+` and digits; 422 when it is no phone number)', example: '+14155550100' }),
    connection_id: ref('connections', { onDelete: 'set null', check: false, prefix: 'conn', description: 'The `telephony` connection its calls go through (404 unknown, 400 another kind); null: the default connection of the kind, else the operator\'s TELEPHONY_PROVIDER. Test mode always calls through the local driver' }),
    label: text({ max: 200, description: 'A name of your own', example: 'US sales line' }),
  },
  filters: { connection_id: { op: 'eq', description: 'Only numbers of this connection' } },
  keptOnReset: true,
  hooks: {
    async beforeWrite(w, row) {
      await storePhoneIn(w, row, 'phone_number');
      if (row.connection_id) await checkConnectionKind(w, row.connection_id as string);
    },
  },
  routes: {
    docs: {
      list: { summary: 'List voice numbers', description: 'Lists the numbers the organization calls from, newest first.' },
      create: { summary: 'Add a voice number', description: 'Adds a number to call from. `phone_number` is stored in E.164 form (422 naming it when it is no number; 409 when the organization has it already); `connection_id` a `telephony` connection (404 unknown, 400 another kind).' },
      delete: { summary: 'Remove a voice number', description: 'Removes the number; a dialer session that calls from it is 409 until it is deleted.' },
    },
    errors: { create: [404, 409], update: [404] },
  },
});
