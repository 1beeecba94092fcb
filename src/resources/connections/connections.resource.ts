// Provider connections: a tenant's accounts at the services its messages go through (an SMTP and
// IMAP server for e-mail, an SMS gateway; next calendars, models), per organization and mode. Credentials are
// written, sealed under SECRET_KEY, and never answered (`credentials_set`). Test mode never uses a
// connection: every call made with a test key goes to the `local` driver (providers/registry.ts).
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../../platform/errors.ts';
import { nameRefusal, guardedHost, addressRefusal } from '../../platform/outbound-addresses.ts';
import { providerKind, providerKindNames } from '../../platform/providers/registry.ts';
import { emailKind } from '../../platform/providers/email/email.ts';
import { smsKind } from '../../platform/providers/sms/sms.ts';
import { telephonyKind } from '../../platform/providers/telephony/telephony.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, enumOf, json, sealed, text } from '../../platform/resource/fields.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { checkBodyMember } from '../../platform/validation.ts';
import { isIP } from 'node:net';

// The kinds this service has drivers for (each registers itself when its module loads).
void emailKind;
void smsKind;
void telephonyKind;
export const CONNECTION_KINDS = providerKindNames() as [string, ...string[]];

const Settings = Type.Record(Type.String(), Type.Unknown(), { description: 'What the provider needs to be reached: for `email` over `smtp`, `{"smtp": {host, port, secure}, "imap": {host, port, secure, mailbox}}` (imap optional); nothing for `local`', examples: [{ smtp: { host: 'smtp.example.com', port: 587 } }] });
const Credentials = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4000 }), { maxProperties: 20, description: 'The secrets the provider needs (`{"username", "password"}` for `smtp`): written, sealed, never answered', examples: [{ username: 'sales@example.com', password: 'app-password' }] });

/** The provider's settings and credentials checked against what its adapter needs. */
async function checkInput(request: FastifyRequest, input: Record<string, unknown>): Promise<void> {
  let kind = input.kind as string | undefined;
  let provider = input.provider as string | undefined;
  if (kind === undefined) {
    const id = (request.params as { id?: string }).id;
    const row = id ? await selectIn(request.server.services.database.db, 'connections', request.scope).select(['kind', 'provider']).where('id', '=', id).executeTakeFirst() : undefined;
    if (!row) return; // the kernel answers 404
    ({ kind, provider } = row);
  }
  const known = providerKind(kind!)!;
  const adapter = provider === 'local' ? undefined : known.adapters[provider!];
  if (provider !== 'local' && !adapter) throw badRequest(`Invalid provider for kind ${kind}: must be one of ${['local', ...Object.keys(known.adapters)].join(', ')}`, 'provider');
  if (!adapter) return;
  if (input.settings !== undefined) {
    checkBodyMember(adapter.settings, input.settings, 'settings');
    checkHosts(request, input.settings as Record<string, unknown>);
  }
  if (input.credentials !== undefined && input.credentials !== null) checkBodyMember(adapter.credentials, input.credentials, 'credentials');
}

/**
 * Servers named by address or as `localhost` are judged now (a server's `host`, an API's `api_url`);
 * names are judged again at each connection.
 */
function checkHosts(request: FastifyRequest, settings: Record<string, unknown>): void {
  const { config } = request.server.services;
  const policy = { allowPrivate: config.outboundAllowPrivate, allowLinkLocal: config.outboundAllowLinkLocalUnsafe };
  const judge = (written: string, field: string) => {
    const host = guardedHost(written);
    const refusal = isIP(host) ? addressRefusal(host, policy) : nameRefusal(host, policy);
    if (refusal) throw badRequest(`${field} is a ${refusal} address, which this service does not connect to`, field);
  };
  for (const [name, server] of Object.entries(settings)) {
    if (typeof (server as { host?: unknown })?.host === 'string') judge((server as { host: string }).host, `settings.${name}.host`);
  }
  if (typeof settings.api_url === 'string') {
    const url = URL.parse(settings.api_url);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) throw badRequest('settings.api_url must be an http(s) URL', 'settings.api_url');
    judge(url.hostname, 'settings.api_url');
  }
}

export const connections = defineResource({
  name: 'connection', plural: 'connections', prefix: 'conn', table: 'connections', notFound: 'Connection not found',
  tag: 'Connections', tagDescription: 'Your accounts at the providers messages and calls go through (SMTP and IMAP servers, SMS gateways, telephony), credentials sealed',
  fields: {
    kind: enumOf(CONNECTION_KINDS, { required: true, createOnly: true, description: 'What the connection is for: `email`, `sms` or `telephony`', example: 'email' }),
    provider: text({ required: true, createOnly: true, min: 1, max: 50, description: 'Which provider: for `email`, `smtp` (a real SMTP server, with IMAP for replies) or `local`; for `sms`, `twilio` or `local`; for `telephony`, `twilio` or `local`. `local` sends nothing and records each message in the outbox (for calls: calls nobody and plays an outcome the number chooses)', example: 'smtp' }),
    name: text({ max: 200, description: 'A name of your own', example: 'Sales team (Fastmail)' }),
    settings: json({ nullable: false, default: {}, input: Settings, output: Settings, description: 'What the provider needs to be reached' }),
    credentials: sealed('credentials', { description: 'The secrets the provider needs; written, never answered (see `credentials_set`)', input: Credentials }),
    is_default: boolean({ nullable: false, default: false, description: 'Live calls of this kind that name no connection go through the default one (else the newest connection of the kind)', example: true }),
  },
  filters: { kind: { op: 'eq', description: 'Only connections of this kind' }, provider: { op: 'eq', description: 'Only connections to this provider' } },
  keptOnReset: true,
  eventDocs: { created: 'A provider connection was created (its credentials are never part of an event)', updated: 'A provider connection was changed; `previous_attributes` holds the earlier values (credentials only as `credentials_set`)' },
  hooks: { checkInput },
  routes: {
    docs: {
      list: { summary: 'List connections', description: 'Lists the provider connections, newest first; filter by `kind` or `provider`. Credentials are never answered: `credentials_set` says whether some are stored.' },
      create: { summary: 'Create a connection', description: 'Connects a provider: `settings` as the provider needs them (checked: 422 naming the member at fault), `credentials` sealed under the service\'s key and never answered. Calls made with a test-mode key never use a connection: they go to the local driver and are recorded in the outbox. A server named by a private or loopback address is refused unless the operator allows it (OUTBOUND_ALLOW_PRIVATE).' },
      get: { summary: 'Get a connection', description: 'Reads one connection, without its credentials.' },
      update: { summary: 'Update a connection', description: 'Changes the name, settings, credentials (replaced as a whole; null clears them) or `is_default`. `kind` and `provider` are fixed at creation.' },
      delete: { summary: 'Delete a connection', description: 'Deletes the connection and its sealed credentials.' },
    },
    errors: { create: [422], update: [422] },
  },
});
