// Kysely's table types. Generated from the migrations into schema.generated.ts (`npm run db:types`,
// see schema-types.ts; `npm run lint` fails when it is stale): a column is written in its migration
// and nowhere else by hand. Code imports them from here.
export type * from './schema.generated.ts';
