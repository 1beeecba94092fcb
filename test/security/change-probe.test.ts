// The hostile-input walk reads a change probe after each input instead of the tenant's whole
// snapshot (support/probe.ts). These tests plant stray writes and check that they are caught: any
// write through the store's write path (in either mode, or in a client organization of an agency)
// and any key written, by the probe; a write that bypasses the write path, by the whole snapshot the
// walk compares around each route.
import { afterAll, describe, expect, it } from 'vitest';
import { runWrite } from '../../src/platform/write.ts';
import { grantCredits } from '../../src/resources/usage/usage.store.ts';
import { testApp } from '../helpers/app.ts';
import { freshOrg } from './support/actors.ts';
import { guarded, loadApi } from './support/api.ts';
import { make, paramsFor } from './support/factories.ts';
import { changeProbe } from './support/probe.ts';
import { json } from './support/reply.ts';
import { snapshot } from './support/snapshot.ts';
import { UNLIMITED } from './walks/hostile-app.ts';

const app = await testApp({ env: UNLIMITED });
const api = await loadApi(app);

afterAll(async () => {
  await app.close();
});

describe('the change probe', () => {
  it('stays the same across refused requests and reads', async () => {
    const org = await freshOrg(app, 'R');
    const probe = await changeProbe(app, org.orgId);
    expect((await org.live.call('POST', '/v1/lists', { body: { name: 'x', type: 'nope' } })).status).toBeGreaterThanOrEqual(400);
    expect((await org.live.call('POST', '/v1/lists', { payload: '{"name":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await org.live.call('GET', '/v1/lists')).status).toBe(200);
    expect(await changeProbe(app, org.orgId)).toBe(probe);
  });

  it('moves with a write made through the store between two probes, in either mode', async () => {
    const org = await freshOrg(app, 'W');
    for (const mode of ['live', 'test'] as const) {
      const before = await changeProbe(app, org.orgId);
      await runWrite(app.services.database, { orgId: org.orgId, mode }, (w) => grantCredits(w, 1, 'a stray write'));
      expect(await changeProbe(app, org.orgId), `a stray write in ${mode} mode`).not.toBe(before);
    }
  });

  it('moves with a write in a client organization of the agency, and with a key written', async () => {
    const org = await freshOrg(app, 'A');
    const { org_id: client } = await make(api, org.live, '/v1/agency/clients', { fresh: true });
    let before = await changeProbe(app, org.orgId);
    await runWrite(app.services.database, { orgId: client, mode: 'live' }, (w) => grantCredits(w, 1, 'a stray write'));
    expect(await changeProbe(app, org.orgId), 'a stray write in a client organization').not.toBe(before);
    // Keys are written outside the write path (they record no event): their rows are probed.
    before = await changeProbe(app, org.orgId);
    const key = json(await org.live.call('POST', '/auth/v1/api-keys', { body: { name: 'probe' } })).data;
    expect(await changeProbe(app, org.orgId), 'a key made').not.toBe(before);
    before = await changeProbe(app, org.orgId);
    expect((await org.live.call('PATCH', `/auth/v1/api-keys/${key.api_key_id}`, { body: { name: 'renamed' } })).status).toBe(200);
    expect(await changeProbe(app, org.orgId), 'a key renamed').not.toBe(before);
  });

  it('leaves to the whole snapshot a write that bypasses the write path, which that snapshot shows', async () => {
    const org = await freshOrg(app, 'S');
    for (const route of guarded(api)) await paramsFor(api, org.live, route);
    const { id } = await make(api, org.live, '/v1/lists');
    const [probe, whole] = [await changeProbe(app, org.orgId), await snapshot(api, org.live)];
    await app.services.database.db.updateTable('lists').set({ name: 'renamed behind the write path' }).where('id', '=', id).execute();
    expect(await changeProbe(app, org.orgId), 'no event, no counter: the probe cannot see it').toBe(probe);
    expect(await snapshot(api, org.live)).not.toBe(whole);
  });
});
