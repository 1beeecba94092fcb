// The launch preflight of a campaign (`GET /v1/campaigns/{id}/launch/preflight`, and the guard of
// its launch): what must hold before its messages go out, after the rules Gmail and Yahoo set for
// bulk senders (mail authenticated by SPF, DKIM and DMARC, a one-click unsubscribe, and only to
// people who did not ask to be left alone), plus what the campaign itself needs: renderable steps,
// an audience, mailboxes with room to send, a sending window and the credits of its launch.
import type { Kysely } from 'kysely';
import { parseJson } from '../../db/sql.ts';
import type { DB } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { Scope } from '../../platform/scope.ts';
import { readCounter } from '../../platform/write.ts';
import type { Schedule } from '../../platform/time/schedule.ts';
import type { Step } from './campaigns.schemas.ts';
import { messagesOf } from './campaign-sequence.ts';
import { audienceFacts } from './preflight-audience.ts';
import { audienceCheck, creditsCheck, scheduleCheck, stepsCheck, unsubscribeCheck, type Check } from './preflight-checks.ts';
import { campaignMailboxes, domainsCheck, mailboxesCheck } from './preflight-sending.ts';
import { stepVariables } from './template-variables.ts';

export interface Preflight {
  ready: boolean;
  checks: Check[];
}

/** Runs every check of the campaign stored as `row`, reading through `db` (a transaction, in a launch). */
export async function preflight(db: Kysely<DB>, scope: Scope, row: Row, now: number): Promise<Preflight> {
  const steps = parseJson<Step[]>(row.steps);
  const schedule = parseJson<Schedule | null>(row.schedule);
  const listId = (row.list_id as string | null) ?? null;
  const emailSteps = steps.filter((s) => s.channel === 'email').length;
  const emailing = emailSteps > 0;
  const variables = stepVariables(steps);
  const windowHours = schedule ? schedule.end_hour - schedule.start_hour : 24;
  // One after another: in a launch they share the write's transaction.
  const audience = listId ? await audienceFacts(db, scope, listId, variables.needed) : undefined;
  const mailboxes = emailing ? await campaignMailboxes(db, scope, parseJson<string[]>(row.mailbox_ids ?? '[]'), windowHours, now) : { found: [], gone: [] };
  const balance = await readCounter(db, scope, 'credits');
  const checks: Check[] = [
    stepsCheck(steps, variables, audience),
    audienceCheck(listId, audience, emailing),
    mailboxesCheck(emailing, mailboxes, (audience?.reachable ?? 0) * emailSteps),
    await domainsCheck(db, scope, emailing, mailboxes.found),
    unsubscribeCheck(steps),
    scheduleCheck(schedule, now),
    creditsCheck(messagesOf(steps, audience?.enrolled ?? 0), balance),
  ];
  return { ready: checks.every((c) => c.status !== 'fail'), checks };
}

/** The refusal of a launch whose preflight fails: 409 naming the failing checks, with them under `checks`. */
export function preflightRefusal(result: Preflight): AppError {
  const failing = result.checks.filter((c) => c.status === 'fail');
  const names = failing.map((c) => c.name).join(', ');
  return new AppError('conflict', `The launch preflight failed: ${names}. Fix ${failing.length === 1 ? 'it' : 'them'}, or launch with {"force": true}`, { extra: { checks: failing } });
}
