import { Type, type Static } from 'typebox';
import { Nullable, PageQuery, Str, StringEnum, Timestamp } from '../../platform/schemas.ts';

const ORG_EXAMPLE = 'org_01JD8X4M6R2T9Q3V5W7Y8Z0A1B';
const GRANT_CODE_EXAMPLE = 'agc_N2q8sVb1xYpLr7uFh0mGcJdEaT4oKiQyU6nXw3ZkWfE';

export const ClientSchema = Type.Object({
  org_id: Type.String({ description: 'The client organization; send it as `X-Org-Id` with an agency key to act for it', examples: [ORG_EXAMPLE] }),
  name: Type.String({ description: 'Name of the client organization', examples: ['Northwind Traders'] }),
  created_at: Timestamp('When the client organization was created, unix seconds'),
  linked_at: Timestamp('When it was linked to the agency in this mode, unix seconds'),
}, { description: 'A client organization the agency may act for, in the key\'s mode' });
export type Client = Static<typeof ClientSchema>;

export const ClientCreateSchema = Type.Object({
  name: Str({ description: 'Name of the new client organization', minLength: 1, maxLength: 200, examples: ['Northwind Traders'] }),
}, { additionalProperties: false, description: 'A new client organization' });

export const ClientLinkSchema = Type.Object({
  grant_code: Str({ description: 'The code the client made with `POST /auth/v1/agency-grants` (single use, valid 24 hours)', minLength: 1, maxLength: 100, examples: [GRANT_CODE_EXAMPLE] }),
}, { additionalProperties: false, description: 'A grant code to redeem' });

export const ClientParams = Type.Object({
  org_id: Str({ description: 'The client organization', maxLength: 64, examples: [ORG_EXAMPLE] }),
});

export const ClientQuerySchema = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const UnlinkedSchema = Type.Object({
  org_id: Type.String({ description: 'The client organization, which remains with its data', examples: [ORG_EXAMPLE] }),
  unlinked: Type.Literal(true, { description: 'Always true' }),
}, { description: 'The client was unlinked' });

export const AgencyUsageSchema = Type.Object({
  period_start: Timestamp('Start of the current calendar month (UTC), unix seconds'),
  period_end: Timestamp('Start of the next calendar month (UTC), unix seconds: the end of the period, exclusive'),
  debited: Type.Integer({ description: 'Credits the agency\'s keys spent in all clients this period, in the key\'s mode', examples: [180] }),
  clients: Type.Array(Type.Object({
    org_id: Type.String({ description: 'The client organization', examples: [ORG_EXAMPLE] }),
    name: Type.String({ description: 'Its name', examples: ['Northwind Traders'] }),
    debited: Type.Integer({ description: 'Credits the agency\'s keys spent in it this period', examples: [180] }),
    transactions: Type.Integer({ description: 'Debits the agency\'s keys made in it this period', examples: [1] }),
  }), { description: 'One entry per client with debits this period, largest first' }),
}, { description: 'What the agency\'s keys spent in its clients\' ledgers this month' });

export const GrantStatus = StringEnum(['pending', 'active', 'unlinked', 'expired', 'revoked'] as const, {
  description: '`pending` until redeemed (single use), `expired` if not redeemed within 24 hours, `active` while the agency is linked through it, `unlinked` once the agency unlinked, `revoked` once the client revoked it',
  examples: ['active'],
});

export const GrantSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the grant', examples: ['agr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  mode: StringEnum(['live', 'test'] as const, { description: 'The mode it links: the mode of the key that made it; only an agency key of that mode may redeem it', examples: ['live'] }),
  status: GrantStatus,
  agency_org_id: Nullable(Type.String({ description: 'The agency that redeemed it; null while pending', examples: [ORG_EXAMPLE] })),
  agency_name: Nullable(Type.String({ description: 'Its name', examples: ['Outbound Partners'] })),
  created_at: Timestamp('When the grant was made, unix seconds'),
  expires_at: Timestamp('When the code stops being redeemable, unix seconds (24 hours after creation)'),
  redeemed_at: Nullable(Type.Integer({ description: 'When an agency redeemed it, unix seconds', examples: [1767229200] })),
  revoked_at: Nullable(Type.Integer({ description: 'When the client revoked it, unix seconds', examples: [1767232800] })),
}, { description: 'Access this organization offered an agency; the code itself is never shown again' });
export type Grant = Static<typeof GrantSchema>;

export const CreatedGrantSchema = Type.Object({
  ...GrantSchema.properties,
  grant_code: Type.String({ description: 'The single-use code to hand to the agency, shown only in this response', examples: [GRANT_CODE_EXAMPLE] }),
}, { description: 'A new grant with its code' });

export const GrantParams = Type.Object({
  id: Str({ description: 'Identifier of the grant', maxLength: 64, examples: ['agr_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
});

export const GrantQuerySchema = Type.Object({ ...PageQuery }, { additionalProperties: false });
