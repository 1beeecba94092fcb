// Sending domains: the domains a tenant sends e-mail from. The service makes each one's DKIM key
// pair (the private key sealed, never answered), answers the DNS records to publish, and checks
// them on request (`POST /v1/domains/{id}/verify`, domains.routes.ts); the mail sender signs with
// the key of a verified domain only (dkim.ts).
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, json, text, timestamp } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { DnsRecordSchema, DOMAIN_STATUSES } from './dns-records.ts';
import { beforeWrite, domainFilter, prepareDomain } from './domains.store.ts';

export const DOMAIN_NOT_FOUND = 'Domain not found';

const DOMAIN_INPUT = Str({
  description: 'The domain mail is sent from (the part after @ of the From address): a host name of two labels or more. Stored lower-cased in its ASCII form (`bücher.de` becomes `xn--bcher-kva.de`), without a trailing dot; IP addresses and single names are 422',
  minLength: 1, maxLength: 253, examples: ['mail.example.com'],
});

export const sendingDomains = defineResource({
  name: 'domain', plural: 'domains', prefix: 'dom', table: 'sending_domains', notFound: DOMAIN_NOT_FOUND,
  tag: 'Sending domains', tagDescription: 'Domains mail is sent from: their DKIM keys and the DNS records to publish and verify',
  fields: {
    domain: { ...text({ required: true, createOnly: true, unique: true, max: 253, description: 'The domain mail is sent from, lower-cased, in its ASCII (punycode) form', example: 'mail.example.com' }), input: DOMAIN_INPUT },
    description: text({ max: 500, description: 'Free-text description', example: 'Outbound sales mail' }),
    status: enumOf(DOMAIN_STATUSES, {
      readOnly: true, nullable: false, default: 'pending', example: 'verified',
      description: '`pending` until checked, `verified` when the last check found every record, `failed` when it found one missing or wrong (see each record\'s `finding`); read-only',
    }),
    records: json({
      readOnly: true, nullable: false, description: 'The DNS records to publish (SPF, DKIM, DMARC, return path), each with what the last check found',
      input: Type.Array(DnsRecordSchema), output: Type.Array(DnsRecordSchema, { description: 'The DNS records to publish, each with what the last check found' }),
    }),
    dkim_selector: text({ readOnly: true, nullable: false, description: 'The DKIM selector of the domain\'s key: its record is `<selector>._domainkey.<domain>`; read-only', example: 'rds1' }),
    verified_at: timestamp({ readOnly: true, description: 'Since when every record has been found, unix seconds; null unless verified; read-only', example: 1767225600 }),
    last_checked_at: timestamp({ readOnly: true, description: 'When the records were last checked, unix seconds; null until checked; read-only', example: 1767225600 }),
  },
  filters: {
    status: { op: 'eq', description: 'Only domains with this status' },
    domain: { op: 'eq', description: 'Only this domain (compared in its stored form)', normalize: domainFilter },
  },
  // Configuration, like webhook endpoints: a sandbox reset keeps a tenant's domains and their keys.
  keptOnReset: true,
  eventDocs: {
    created: 'A sending domain was added; the object holds the DNS records to publish (its DKIM private key is never part of an event)',
    updated: 'A sending domain\'s description was changed; `previous_attributes` holds the earlier value',
    deleted: 'A sending domain was deleted with its DKIM key; mail is no longer signed for it',
  },
  hooks: { checkInput: prepareDomain, beforeWrite },
  routes: {
    docs: {
      list: { summary: 'List sending domains', description: 'Lists the sending domains, newest first, with an exact `total`; filter by `status` and `domain`. DKIM private keys are never answered.' },
      create: {
        summary: 'Add a sending domain',
        description: 'Adds a domain to send mail from. The service makes its DKIM key pair (RSA 2048; the private key is kept sealed and never answered) and answers the DNS records to publish in `records`: SPF, DKIM, DMARC and the return path. Publish them, then call `POST /v1/domains/{id}/verify`. An invalid domain (an IP address, a single name) is 422; a domain already added in this mode is 409.',
      },
      get: { summary: 'Get a sending domain', description: `Reads one domain with its records and what their last check found; 404 \`${DOMAIN_NOT_FOUND}\` if it does not exist.` },
      update: { summary: 'Update a sending domain', description: 'Changes the description (the domain itself cannot change: add the new one instead). An empty body is 400 `No fields to update`.' },
      delete: { summary: 'Delete a sending domain', description: 'Deletes the domain and its DKIM key: mail is no longer signed for it. Reading it afterwards is 404.' },
    },
    errors: { create: [409] },
  },
});
