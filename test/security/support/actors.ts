// Callers of an in-process app: each request is counted, checked against the invariants of every
// response (reply.ts), and any token it returns is remembered as a secret.
import type { FastifyInstance, InjectOptions } from 'fastify';
import { newOrg } from '../../helpers/app.ts';
import { figures } from './figures.ts';
import { checkReply, fromInject, type CheckOptions, type Reply } from './reply.ts';
import { rememberToken } from './secrets.ts';

export type Params = Record<string, string>;

export interface CallOptions {
  /** A JSON value, sent as application/json. */
  body?: unknown;
  /** Raw bytes or text, sent as given (set content-type in `headers`). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  check?: CheckOptions;
}

export interface Actor {
  label: string;
  orgId: string;
  mode: 'live' | 'test';
  token: string;
  call(method: string, url: string, options?: CallOptions): Promise<Reply>;
  /** Objects this actor made, by factory key (factories.ts). */
  made: Map<string, Promise<Params>>;
}

function remember(reply: Reply): void {
  if (reply.status < 300 && reply.body.includes('api_key_token')) {
    const token = /"api_key_token":"([^"]+)"/.exec(reply.body)?.[1];
    if (token) rememberToken(token);
  }
}

/** Sends one request to `app` with exactly the headers given, counted and checked. */
export async function send(app: FastifyInstance, method: string, url: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | Buffer | undefined = options.payload;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  figures.requests++;
  const reply = fromInject(await app.inject({ method: method as InjectOptions['method'], url, headers, ...(payload === undefined ? {} : { payload }) }));
  checkReply(reply, `${method} ${url}`, options.check);
  remember(reply);
  return reply;
}

export function actor(app: FastifyInstance, label: string, orgId: string, mode: 'live' | 'test', token: string): Actor {
  rememberToken(token);
  return {
    label, orgId, mode, token,
    made: new Map(),
    call: (method, url, options = {}) => send(app, method, url, { ...options, headers: { authorization: `Bearer ${token}`, ...options.headers } }),
  };
}

export interface Org {
  orgId: string;
  live: Actor;
  test: Actor;
}

/**
 * A fresh organization with an actor for each of its two keys. It is an agency (unless `agency` is
 * false), so route walks reach the agency routes too; its keys are ordinary keys all the same. Its
 * test mode holds no sandbox data (a walk makes the objects it needs): half the cost of the tenant.
 */
export async function freshOrg(app: FastifyInstance, label: string, options: { agency?: boolean } = {}): Promise<Org> {
  const org = await newOrg(app, undefined, { agency: options.agency ?? true, sandbox: false });
  return {
    orgId: org.org_id,
    live: actor(app, `${label} live`, org.org_id, 'live', org.live_token),
    test: actor(app, `${label} test`, org.org_id, 'test', org.test_token),
  };
}
