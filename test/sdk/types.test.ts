// The SDK's public types are precise: checked by `npm run lint` (tsc), these calls are never sent.
// A line marked @ts-expect-error that type-checks fails the lint.
import { expect, it } from 'vitest';
import { RevenueClient, type Contact, type Page, type Schemas } from '../../sdk/src/index.ts';

async function typeChecks(sdk: RevenueClient) {
  const page = await sdk.contacts.list({ limit: 200, title: 'VP' });
  const first: Contact | undefined = page.data[0];
  const cursor: string | null = page.next_cursor;
  for await (const contact of sdk.contacts.list()) contact satisfies Contact;
  sdk.contacts.list() satisfies Page<Schemas['ContactList'], Contact>;
  const created: Contact = (await sdk.contacts.create({ list_id: 'lst_1', name: 'Ada' })).data;
  await sdk.contacts.assert({ list_id: 'lst_1', work_email: 'ada@example.com' }, { query: { match: 'work_email' }, idempotencyKey: 'k' });
  await sdk.lists.members.remove('lst_1', 'cmp_1');
  const csv: string = await sdk.exports.download('exp_1');
  // @ts-expect-error an unknown field of a create
  await sdk.contacts.create({ list_id: 'lst_1', nickname: 'Ada' });
  // @ts-expect-error a required field missing
  await sdk.companies.create({});
  // @ts-expect-error the path parameter is required
  await sdk.contacts.get();
  // @ts-expect-error a query parameter the operation does not take
  await sdk.contacts.list({ colour: 'blue' });
  // @ts-expect-error a single record is not a list: it cannot be iterated
  for await (const _ of sdk.contacts.get('con_1')) void _;
  // @ts-expect-error a body-less action takes no body
  await sdk.campaigns.pause('cmp_1', { name: 'x' });
  return [first, cursor, created, csv];
}

it('the type checks compile (run by the lint)', () => {
  expect(typeof typeChecks).toBe('function');
});
