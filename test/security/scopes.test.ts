// Key scopes, generated from the route table: the catalog holds a read and a write scope for every
// resource group served, and opens each route by exactly the scope it needs, so a group added later
// is covered as soon as it is served. The walk of every route (refused without its scope, admitted
// with it) runs in shards, one file per resource group: walks/scopes.ts, run by the files in shards/.
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, testApp } from '../helpers/app.ts';
import { freshOrg } from './support/actors.ts';
import { guarded, loadApi } from './support/api.ts';
import { json } from './support/reply.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';
import { label, UNLIMITED } from './walks/hostile-app.ts';
import { everyScope, groupsOf, needed } from './walks/scopes.ts';

const app = await testApp({ env: UNLIMITED });
const api = await loadApi(app);
const groups = groupsOf(api);

afterAll(async () => {
  expectNoSecretsInLogs(capturedLogs);
  await app.close();
});

describe('the scope catalog', () => {
  it('holds `*` and a read and a write scope for every resource group the route table serves', async () => {
    const org = await freshOrg(app, 'S');
    const reply = await org.live.call('GET', '/auth/v1/scopes');
    expect(reply.status).toBe(200);
    const catalog: Array<{ scope: string; routes: string[] }> = json(reply).data.scopes;
    expect(catalog.map((c) => c.scope)).toEqual(everyScope(api));
    for (const group of ['contacts', 'companies', 'lists', 'campaigns', 'events', 'usage', 'agency']) expect(groups).toContain(group);
    // Every route is opened by exactly the scope worked out above.
    for (const route of guarded(api)) {
      const scope = needed(route);
      const openers = catalog.filter((c) => c.routes.includes(`${route.method} ${route.path}`)).map((c) => c.scope);
      expect(openers, label(route)).toEqual(scope === null ? [] : [scope]);
    }
  });
});
