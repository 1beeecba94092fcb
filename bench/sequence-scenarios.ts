// Scenario 23: sequences. The enrollments of a list made when a sequence runs: 100,000 contacts
// (10,000 quick) enrolled, their first steps due, from `POST /v1/sequences/{id}/run` until the
// sequence is `live` (the scheduling state's job commits the enrollments and the move together), on
// the API process with its workers.
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import type { BenchOptions } from './options.ts';
import type { Server } from './processes.ts';
import { createSeededOrg, seedContacts } from './seed.ts';

export interface SequenceResults {
  s23_enrol_at_run: { enrollments: number; seconds: number; perSecond: number };
}

interface Context {
  database: Database;
  options: BenchOptions;
  log: (message: string) => void;
  start: (script: string, env: Record<string, string>) => Promise<Server>;
  stop: (server: Server) => Promise<void>;
  env: Record<string, string>;
}

async function send<T>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

export async function sequenceScenarios(ctx: Context): Promise<SequenceResults> {
  const enrollments = ctx.options.quick ? 10_000 : 100_000;
  ctx.log(`scenario 23, a sequence enrolling a list of ${enrollments.toLocaleString('en')} contacts when it runs`);
  const org = await createSeededOrg(ctx.database, 'Sequence org');
  org.listIds = org.listIds.slice(0, 1);
  await seedContacts(ctx.database, org, enrollments);
  if (ctx.database.dialect === 'postgres') await sql`analyze`.execute(ctx.database.db);
  const api = await ctx.start('bench/instrumented-server.ts', ctx.env);
  try {
    const v1 = `${api.url}/v1`;
    const mailbox = await send<{ id: string }>('POST', `${v1}/mailboxes`, org.token, { email: 'ada@bench-sequences.example' });
    const sequence = await send<{ id: string }>('POST', `${v1}/sequences`, org.token, { name: 'Bench', associated_list_id: org.listIds[0], mailbox_ids: [mailbox.id] });
    // Due a day after enrolment: the scheduler has nothing to send while the enrolment is measured.
    await send('POST', `${v1}/sequences/${sequence.id}/steps`, org.token, { subject: 'Hello', body: 'Hi {{ contact.first_name }}', time_interval: 86_400 });
    const started = performance.now();
    await send('POST', `${v1}/sequences/${sequence.id}/run`, org.token);
    for (;;) {
      const read = await send<{ status: string; counts: { enrolled: number } }>('GET', `${v1}/sequences/${sequence.id}`, org.token);
      if (read.status === 'live') {
        if (read.counts.enrolled !== enrollments) throw new Error(`scenario 23 enrolled ${read.counts.enrolled} of ${enrollments}`);
        break;
      }
      if (performance.now() - started > 600_000) throw new Error('scenario 23: the sequence was not live within 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    return { s23_enrol_at_run: { enrollments, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round(enrollments / seconds) } };
  } finally {
    await ctx.stop(api);
  }
}
