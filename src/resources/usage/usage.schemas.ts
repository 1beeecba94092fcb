import { Type, type Static } from 'typebox';
import { ActorSchema, Nullable, PageQuery, StringEnum, Timestamp } from '../../platform/schemas.ts';

export const TRANSACTION_TYPES = ['grant', 'debit', 'refund'] as const;
const TransactionType = StringEnum(TRANSACTION_TYPES, { description: 'A grant adds credits, a debit pays for an operation, a refund returns a debit', examples: ['debit'] });

export const TransactionSchema = Type.Object({
  id: Type.String({ description: 'Identifier of the transaction', examples: ['txn_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  type: TransactionType,
  amount: Type.Integer({ description: 'Credits moved, always positive; the type says in which direction', examples: [180] }),
  balance_after: Type.Integer({ description: 'The balance right after this transaction', examples: [820] }),
  operation: Type.String({ description: 'What the credits were for: `grant`, or the billable operation such as `campaign.launch`', examples: ['campaign.launch'] }),
  resource_id: Nullable(Type.String({ description: 'The resource the operation acted on', examples: ['cpg_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] })),
  description: Nullable(Type.String({ description: 'Human-readable explanation', examples: ['Launch of campaign "Q4 outbound": 180 contacts enrolled'] })),
  created_at: Timestamp('When the transaction happened, unix seconds'),
  actor: ActorSchema,
}, { title: 'UsageTransaction', description: 'A credit-ledger entry' });
export type Transaction = Static<typeof TransactionSchema>;

export const TransactionQuerySchema = Type.Object({
  ...PageQuery,
  type: Type.Optional(TransactionType),
}, { additionalProperties: false });
export type TransactionQuery = Static<typeof TransactionQuerySchema>;

const Credits = (description: string, example: number) => Type.Integer({ description, examples: [example] });

export const UsageSchema = Type.Object({
  balance: Credits('Credits available now', 820),
  period_start: Timestamp('Start of the current calendar month (UTC), unix seconds'),
  period_end: Timestamp('Start of the next calendar month (UTC), unix seconds: the end of the period, exclusive'),
  granted: Credits('Credits granted this period', 1000),
  debited: Credits('Credits debited this period', 180),
  refunded: Credits('Credits refunded this period', 0),
  transactions: Credits('Ledger entries this period', 2),
}, { title: 'UsageBalance', description: 'The balance and this month\'s use' });
export type Usage = Static<typeof UsageSchema>;
