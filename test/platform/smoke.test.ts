import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { tenant, testApp } from '../helpers/app.ts';

describe('smoke', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(() => app.close());

  it('creates a list and a contact and lists them', async () => {
    const t = await tenant(app);
    const list = await t.live.post('/v1/lists', { name: 'L', type: 'contacts' });
    expect(list.statusCode).toBe(201);
    const listId = list.json().data.id;
    const contact = await t.live.post('/v1/contacts', { list_id: listId, work_email: 'a@b.co' });
    expect(contact.statusCode).toBe(201);
    const page = await t.live.get('/v1/contacts');
    expect(page.json().pagination.total).toBe(1);
  });
});
