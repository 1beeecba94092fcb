// A cheap read that moves with any write of an organization, taken after each hostile input instead
// of a whole snapshot (snapshot.ts reads every collection and every object: dozens of requests).
// Every write of the service runs in one transaction that records its events and moves the
// tenant's counters (the event sequence `events`, row totals, the credit balance), so a refused
// input that wrote anything through the write path shows here. API keys are written outside it
// (no event), so their rows are read too. The organization's counters are read in both modes, and
// those of the client organizations it acts for as an agency. The route walks still compare whole
// snapshots at the start and the end of each route, for writes that would bypass the write path.
import type { FastifyInstance } from 'fastify';
import { canonicalJson } from '../../../src/platform/canonical-json.ts';

export async function changeProbe(app: FastifyInstance, orgId: string): Promise<string> {
  const db = app.services.database.db;
  const clients = db.selectFrom('agency_links').select('client_org_id').where('org_id', '=', orgId);
  const [counters, keys] = await Promise.all([
    db.selectFrom('counters').select(['org_id', 'mode', 'name', 'value'])
      .where((eb) => eb.or([eb('org_id', '=', orgId), eb('org_id', 'in', clients)]))
      .orderBy('org_id').orderBy('mode').orderBy('name').execute(),
    // Key use is stamped at authentication, by design: not a write of the input.
    db.selectFrom('api_keys').select(['id', 'name', 'mode', 'scopes', 'expires_at', 'revoked_at', 'is_agency'])
      .where('org_id', '=', orgId).orderBy('id').execute(),
  ]);
  return canonicalJson({ counters: counters.map((c) => ({ ...c, value: Number(c.value) })), keys });
}
