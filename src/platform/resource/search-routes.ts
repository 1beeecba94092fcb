// Search routes of every resource that declares `search` fields: `POST /v1/search/<plural>` (filters,
// filter groups, full text and sort, keyset-paged with an exact total) and `GET /v1/search?q=` (the
// best full-text hits of each searchable object at once). A search is a read: it answers 200.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { canonicalJson } from '../canonical-json.ts';
import { listCacheFor } from '../list-cache.ts';
import { badRequest } from '../errors.ts';
import { paginate } from '../pagination.ts';
import { grants } from '../scopes.ts';
import { errorResponses, ListOf } from '../schemas.ts';
import type { Resource } from './define.ts';
import { compileSearch, parseKey, searchCount, searchPage, type SearchRequest } from './search.ts';
import { searchWords, textMatch, textRank } from './search-index.ts';
import { globalSearchResult, GlobalSearchQuery, searchBody } from './search-schemas.ts';
import { present } from './store.ts';
import { recordsIn } from './soft-delete.ts';

/** The resources of `all` that are searchable; checks that their search fields are text fields. */
export function searchable(all: Resource[]): Resource[] {
  const out = all.filter((r) => r.search && r.search.length > 0);
  for (const r of out) {
    for (const name of r.search!) {
      if (!['text', 'email', 'url'].includes(r.fields[name]?.kind)) throw new Error(`${r.plural}: search field ${name} is not a text field`);
    }
  }
  return out;
}

export function searchRoutes(all: Resource[]): FastifyPluginAsync {
  const resources = searchable(all);
  return async (app: FastifyInstance) => {
    const { database } = app.services;
    const { db, dialect } = database;

    for (const r of resources) {
      const lists = listCacheFor(app.services.lists, r.readsClock);
      app.post(`/search/${r.plural}`, {
        schema: {
          tags: [r.tag],
          summary: `Search ${r.plural}`,
          description: `Finds ${r.plural} by any of their fields (\`filters\` all hold, and at least one of \`filter_groups\` when given), by full text (\`q\`, prefix match over ${r.search!.join(', ')}), in any order (\`sort\`), with an exact \`total\` and cursors that walk every match once, whatever the sort, while others write. A search changes nothing: it answers 200.`,
          body: searchBody(r),
          response: { 200: ListOf(r.schemas.record, `A page of matching ${r.plural}`), ...errorResponses() },
        },
      }, (req, reply) => {
        const body = req.body as SearchRequest & { limit?: number; cursor?: string };
        const { limit: _limit, cursor, ...search } = body;
        // Answers and totals are kept per tenant until its next write, like those of list endpoints.
        return lists.answer(req, reply, async (version, along) => {
          const compiled = await compileSearch(r, db, dialect, req.scope, body);
          return paginate(req, body, {
            fetch: (page) => searchPage(r, db, req.scope, compiled, { after: page.after === undefined ? undefined : parseKey(compiled, page.after), offset: page.offset, take: page.take }, along),
            count: () => lists.total(req.scope, `search ${r.plural} ${canonicalJson(search)}`, version, () => searchCount(r, db, req.scope, compiled)),
            keyOf: (hit) => hit.key,
            map: (hits) => present(r, db, req.scope, hits.map((h) => h.row as never)),
          });
        }, { key: canonicalJson(body), walking: cursor !== undefined });
      });
    }

    app.get('/search', {
      schema: {
        tags: ['Search'],
        operationId: 'searchAll', summary: 'Search every object',
        description: `Full-text search over ${resources.map((r) => r.plural).join(', ')} at once: for each object, its best hits (most relevant first) and the exact number of matches. Every word of \`q\` must begin a word of a record's searched fields.`,
        querystring: GlobalSearchQuery,
        response: { 200: globalSearchResult(resources), ...errorResponses() },
      },
    }, async (req) => {
      const { q, limit = 5 } = req.query as { q: string; limit?: number };
      const words = searchWords(q);
      if (words.length === 0) throw badRequest('q has no words to search for: give letters or digits', 'q');
      // Only the objects the key may read (GET /v1/search itself needs search:read).
      const readable = resources.filter((r) => grants(req.apiKey?.scopes ?? [], `${r.plural}:read`));
      const groups = await Promise.all(readable.map(async (r) => {
        const match = textMatch(dialect, r.table, r.search!, words);
        const [rows, count] = await Promise.all([
          recordsIn(r, db, req.scope).where(match).selectAll()
            .orderBy(sql`${textRank(dialect, r.table, r.search!, words)}`, 'desc').orderBy(sql.ref(`${r.table}.id`), 'desc').limit(limit).execute(),
          recordsIn(r, db, req.scope).where(match).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
        ]);
        return [r.plural, { total: Number(count.n), data: await present(r, db, req.scope, rows as never) }] as const;
      }));
      return { data: Object.fromEntries(groups) };
    });
  };
}
