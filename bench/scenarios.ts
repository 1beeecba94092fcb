// The measurements on one store: seed, then scenarios 1 to 26 against the real service
// (src/server.ts through bench/instrumented-server.ts) with real API keys, each baseline measured
// in turn with the scenario it divides.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { dealScenarios, type DealResults } from './deal-scenarios.ts';
import { contactFields, RARE_SUBSTRING, SEGMENTS } from './fixtures.ts';
import { rareTitle, titleWord, titleWordCombinations, type LoadSpec, type RoundResult } from './load.ts';
import type { BenchOptions } from './options.ts';
import { canPin, LOAD_CORE, runLoad, runWalk, startServer, TWO_SERVER_CORES, type LoadResult, type Server } from './processes.ts';
import { searchScenarios, type SearchResults } from './search-scenarios.ts';
import { createSeededOrg, EPOCH_MS, seedContacts, seedDeals } from './seed.ts';
import { createStore, type StoreKind } from './stores.ts';
import { benchWebhooks, type WebhookResults } from './webhooks.ts';
import { importScenario, type ImportResults } from './import-scenario.ts';
import { mailScenarios, type MailResults } from './mail-scenarios.ts';
import { sequenceScenarios, type SequenceResults } from './sequence-scenarios.ts';
import { voiceScenarios, type VoiceResults } from './voice-scenarios.ts';

export interface Figure {
  /** Medians over the rounds: requests per second and latency in milliseconds. */
  rps: number;
  p50: number;
  p99: number;
  /** (max - min) / median of the rounds' requests per second. */
  spread: number;
  /**
   * Server CPU time per request (user + system, microseconds, warm-up included). Unlike requests
   * per second it hardly moves when other processes compete for the machine.
   */
  cpuUsPerRequest: number | null;
  /** Share of one core the server used while loaded; well under 1 means the load generator, not the server, set the pace. */
  serverCpuShare: number | null;
  /** The load generator's own CPU time per request (measured rounds, microseconds). */
  loadCpuUsPerRequest: number | null;
  statuses: Record<string, number>;
  /** Responses whose status was not the expected one, and connection errors. */
  unexpected: number;
  rounds: RoundResult[];
}

export interface StoreResult {
  store: StoreKind;
  seed: { contacts: number; deals: number; smallOrgs: number; smallOrgContacts: number; seconds: number };
  /**
   * Baseline (e) twice: the statements of the created_at window (2u) and of title contains (4u).
   * Baseline (g): baseline (c) with only what every authenticated answer must carry, measured in turn
   * with (c) and scenario 1. Baseline (h): the page and its count as a data API issues them (19).
   */
  baselines: { c_get_by_id: Figure; g_get_floor: Figure; d_insert: Figure; e_filtered_page: Figure; e_titled_page: Figure; h_peer_list: Figure };
  scenarios: {
    s1_get_one: Figure;
    /**
     * SQLite: GET one by the service pinned to one core, and by `processes` whole service processes
     * (Node's cluster, WORKERS=off) on `cores`, in turn; null elsewhere. `bound`: the most any server
     * can gain on those cores over one. With one of them the load generator's, from the CPU per
     * request of the service (S) and of the load (L), 2S / (S + L); else their number.
     */
    s1x2_two_cores: { oneCore: Figure; twoCores: Figure; cores: string; processes: number; sharedWithLoad: boolean; bound: number | null } | null;
    /**
     * GET one's tail: the service and baseline (c) in turn on 50 connections at one rate both carry
     * (`rate`, half the service's rate of scenario 1), so that their p99 compare the same load.
     */
    s1p_tail: { rate: number; getOne: Figure; bare: Figure };
    /** coldMs: the first request, before any answer was cached. */
    s2_list_first_page: Figure & { total: number; coldMs: number };
    /** The list filtered by a `created_after` no request asked before, with its total: uncached. */
    s2u_list_uncached: Figure;
    /** GET one on one connection, alone and under 50 connections of uncached filtered lists (`load`). */
    s9p_responsiveness: { alone: Figure; underLoad: Figure; load: Figure };
    s3_cursor_walk: { pages: Record<string, { p50: number; p90: number; samples: number }>; walked: number; seconds: number; deepest: number };
    s4_title_contains: Figure & { total: number; substring: string; coldMs: number };
    /** Title contains a piece of the rare title, in a mix of cases, with a created_before no request asked before: uncached. */
    s4u_title_uncached: Figure;
    /**
     * Title contains one of 200 words, with a created_after, each request a combination no request
     * asked before (`titleWord`): uncached, in turn with baseline (h). `matches`: the totals of the
     * values checked first (service and baseline agree on them and on the page).
     */
    s19_peer_list: Figure & { matches: number[] };
    s5_create: Figure;
    /** `getOne` is scenario 1 on the service without them, measured in turn: the target divides by it. */
    s6_rate_limited: Figure & { rejectedPerSecond: number; allowedPerSecond: number; getOne: Figure };
    /** GET one and the first page on a store of `base` contacts (`small`) and on this one (`large`), measured in turn. */
    s7_growth: { base: number; small: { getOne: Figure; listFirst: Figure }; large: { getOne: Figure; listFirst: Figure } } | null;
    /** 100 contacts per request: records per second is 100 × rps. `creates` is scenario 5's, measured in turn: the target divides by it. */
    s11_assert_batch: Figure & { recordsPerSecond: number; creates: Figure };
    s12_custom_field_filter: Figure & { total: number };
    s8_resources: { peakRssMb: number; eldUnderListLoad: { p50: number; p99: number; max: number }; eldMaxMs: number; rssAfterMb: Record<string, number> };
  } & WebhookResults & SearchResults & DealResults & ImportResults & MailResults & SequenceResults & VoiceResults;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export function summarize(result: LoadResult, expected: number[], cpuSeconds: number | null = null): Figure {
  const rounds = result.rounds;
  const rps = rounds.map((r) => r.rps);
  const statuses: Record<string, number> = {};
  let unexpected = 0;
  for (const r of rounds) {
    unexpected += r.errors + r.timeouts;
    for (const [code, n] of Object.entries(r.statuses)) {
      statuses[code] = (statuses[code] ?? 0) + n;
      if (!expected.includes(Number(code))) unexpected += n;
    }
  }
  const mid = median(rps);
  const requests = [result.warmup, ...rounds].reduce((n, r) => n + (r?.requests ?? 0), 0);
  const measured = rounds.reduce((n, r) => n + r.requests, 0);
  const loadCpu = rounds.reduce((t, r) => t + r.loadCpuSeconds, 0);
  return {
    rps: Math.round(mid),
    cpuUsPerRequest: cpuSeconds === null || requests === 0 ? null : Math.round((cpuSeconds / requests) * 1e7) / 10,
    serverCpuShare: cpuSeconds === null ? null : Math.round((cpuSeconds / [result.warmup, ...rounds].reduce((t, r) => t + (r?.seconds ?? 0), 0)) * 100) / 100,
    loadCpuUsPerRequest: measured === 0 ? null : Math.round((loadCpu / measured) * 1e7) / 10,
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    spread: mid ? Math.round(((Math.max(...rps) - Math.min(...rps)) / mid) * 1000) / 1000 : 0,
    statuses,
    unexpected,
    rounds,
  };
}

/** Drives `server` with the load generator and summarizes, with the server's CPU time per request. */
export async function measure(server: Server, spec: LoadSpec, expected: number[]): Promise<Figure> {
  const before = server.cpuSeconds();
  const result = await runLoad(spec);
  const after = server.cpuSeconds();
  return summarize(result, expected, before === null || after === null ? null : after - before);
}

/**
 * Waits (up to 30 s) until each of `servers` used at most one clock tick (10 ms) of CPU in 100 ms:
 * the requests of a turn that ended are answered.
 */
async function idle(servers: Server[]): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const before = servers.map((server) => server.cpuSeconds() ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (servers.every((server, i) => (server.cpuSeconds() ?? 0) - before[i] < 0.015)) return;
  }
}

/**
 * Measures servers round by round in turn (the first, the second, the first, …), each turn after a
 * short warm-up: on a shared machine a slow or a fast minute then falls on all of them, so the
 * ratio of a scenario to its baseline does not depend on which minute each ran in. A turn starts
 * once the one before has finished its work: the servers idle and `settle` resolved (the store's
 * statements done). Requests in flight when a turn ends are still answered, and a list of a second
 * would otherwise take the next turn's first second from the server measured in it. A run's
 * `before` is done right before each of its turns (once the servers idle) and its `after` right
 * after: the work a turn is measured beside (scenario 24's due steps) then falls in that turn only.
 */
export interface InTurnRun { server: Server; spec: LoadSpec; expected?: number[]; before?: () => Promise<void>; after?: () => Promise<void> }

export async function measureInTurn(runs: InTurnRun[], expected: number[], settle?: () => Promise<void>): Promise<Figure[]> {
  const measured = runs.map(() => ({ warmups: [] as RoundResult[], rounds: [] as RoundResult[], cpuSeconds: 0 as number | null }));
  for (let round = 0; round < runs[0].spec.rounds; round++) {
    for (const [i, { server, spec, before: beforeTurn, after: afterTurn }] of runs.entries()) {
      if (round > 0 || i > 0) {
        await idle(runs.map((r) => r.server));
        await settle?.();
      }
      await beforeTurn?.();
      const before = server.cpuSeconds();
      // Each round continues an uncached sequence where no earlier round was (the servers of one round ask the same).
      const sequenceStart = (spec.sequenceStart ?? 0) + round * 1_000_000;
      const result = await runLoad({ ...spec, sequenceStart, rounds: 1, warmupSeconds: round === 0 ? spec.warmupSeconds : Math.min(1, spec.warmupSeconds) });
      const after = server.cpuSeconds();
      await afterTurn?.();
      const m = measured[i];
      if (result.warmup) m.warmups.push(result.warmup);
      m.rounds.push(...result.rounds);
      m.cpuSeconds = before === null || after === null || m.cpuSeconds === null ? null : m.cpuSeconds + after - before;
    }
  }
  return measured.map(({ warmups, rounds, cpuSeconds }, i) => {
    // summarize counts warm-up requests and seconds into CPU per request and the busy share.
    const warmup = warmups.length === 0 ? null : { ...warmups[0], requests: warmups.reduce((n, w) => n + w.requests, 0), seconds: warmups.reduce((t, w) => t + w.seconds, 0) };
    return summarize({ warmup, rounds }, runs[i].expected ?? expected, cpuSeconds);
  });
}

interface Context {
  options: BenchOptions;
  workDir: string;
  log: (message: string) => void;
}

const SECRET_KEY = 'bench-secret-key-0123456789abcdef-0123456789';
const RAISED_LIMITS = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '2000000' };

function serviceEnv(url: string, limits: Record<string, string>): Record<string, string> {
  // Production defaults otherwise: LOG_LEVEL info, in-process rate limiter.
  return { DATABASE_URL: url, LOG_LEVEL: 'info', SECRET_KEY, REDIS_URL: '', ...limits };
}

async function getJson<T>(url: string, token?: string): Promise<T> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export async function benchStore(kind: StoreKind, pgServer: string | undefined, ctx: Context): Promise<StoreResult> {
  const { options, log } = ctx;
  const pinned = canPin();
  const store = await createStore(kind, pgServer);
  const database: Database = openDatabase(store.url);
  const settle = () => store.idle();
  const servers: Server[] = [];
  let small: Awaited<ReturnType<typeof smallStore>> | undefined;
  const logFile = join(ctx.workDir, `service-${kind}.log`);
  const start = async (script: string, env: Record<string, string>, cores?: string, log?: string) => {
    const server = await startServer(script, env, log ?? (script.includes('instrumented') ? logFile : undefined), cores);
    servers.push(server);
    return server;
  };
  const stop = async (server: Server) => {
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
  };
  const specFor = (server: Server, spec: Omit<LoadSpec, 'url' | 'connections' | 'warmupSeconds' | 'rounds' | 'roundSeconds'> & Partial<LoadSpec>): LoadSpec =>
    ({ url: server.url, connections: options.connections, warmupSeconds: options.warmupSeconds, rounds: options.rounds, roundSeconds: options.roundSeconds, ...spec });
  const load = (server: Server, spec: Parameters<typeof specFor>[1], expected = [200]) => measure(server, specFor(server, spec), expected);
  const inTurn = (runs: Array<Omit<InTurnRun, 'spec'> & { spec: Parameters<typeof specFor>[1] }>, expected = [200]) =>
    measureInTurn(runs.map(({ server, spec, ...hooks }) => ({ server, spec: specFor(server, spec), ...hooks })), expected, settle);

  try {
    const seedStarted = performance.now();
    log(`${kind}: seeding ${options.smallOrgs} small organizations and ${options.growthBase.toLocaleString('en')} contacts of the large one`);
    const idsFile = join(ctx.workDir, `ids-${kind}.txt`);
    const { big, ids } = await seedSmallSize(kind, database, options, idsFile);
    const auth = { authorization: `Bearer ${big.token}` };
    // Scenario 7 reads the same organization on a second store, left at its small size.
    if (options.contacts > options.growthBase) {
      log(`${kind}: a second store at ${options.growthBase.toLocaleString('en')} contacts (scenario 7)`);
      small = await smallStore(kind, pgServer, options, join(ctx.workDir, `ids-${kind}-small.txt`));
    }
    let seedSeconds = (performance.now() - seedStarted) / 1000;

    const getOneSpec = { kind: 'random-id', path: '/v1/contacts/', idsFile, headers: auth } as const;
    const listFirstSpec = { kind: 'fixed', path: '/v1/contacts?limit=50', headers: auth } as const;
    const listFirst = (server: Server) => load(server, listFirstSpec);

    const topUpStarted = performance.now();
    log(`${kind}: seeding the large organization to ${options.contacts.toLocaleString('en')} contacts and ${options.deals.toLocaleString('en')} deals`);
    const sampleEvery = Math.max(1, Math.floor(options.contacts / 100_000));
    await seedContacts(database, big, options.contacts, (id, i) => {
      if (i % sampleEvery === 0) ids.push(id);
    });
    writeFileSync(idsFile, ids.join('\n'));
    const seededDeals = await seedDeals(database, big, options.deals);
    // A store in service has planner statistics and a visibility map (on PostgreSQL autovacuum
    // gathers the one and, since version 13, vacuums tables that only grew); a store filled a moment
    // ago has neither, and without the map a count reads the table where its index would do.
    if (kind === 'postgres') await sql`vacuum analyze`.execute(database.db);
    seedSeconds += (performance.now() - topUpStarted) / 1000;

    log(`${kind}: baseline (c) and scenario 1 in turn, then scenarios 2 to 5 and 8 at ${options.contacts.toLocaleString('en')} contacts`);
    const service = await start('bench/instrumented-server.ts', serviceEnv(store.url, RAISED_LIMITS));
    const rssAfter: Record<string, number> = {};
    const noteRss = async (name: string) => {
      rssAfter[name] = Math.round((await service.stats()).rssBytes / 1e5) / 10;
    };
    const bareGet = await start('bench/baselines/fastify-get.ts', { DATABASE_URL: store.url, BENCH_ORG_ID: big.scope.orgId });
    // Baseline (g) logs its line per request as the service does, to a file beside the service's.
    const floorGet = await start('bench/baselines/fastify-get-floor.ts',
      { DATABASE_URL: store.url, BENCH_ORG_ID: big.scope.orgId, BENCH_TOKEN: big.token, ...RAISED_LIMITS }, undefined, join(ctx.workDir, `floor-${kind}.log`));
    const [c, g, s1] = await measureInTurn([
      { server: bareGet, spec: specFor(bareGet, { kind: 'random-id', path: '/contacts/', idsFile }) },
      { server: floorGet, spec: specFor(floorGet, getOneSpec) },
      { server: service, spec: specFor(service, getOneSpec) },
    ], [200], settle);
    await stop(bareGet);
    await stop(floorGet);
    await noteRss('s1');

    // 1p: GET one's tail. The service and (c) in turn on 50 connections at the same rate, half what
    // the service answered in scenario 1: both carry it, so their p99 compare the same load (at
    // full speed each answers as fast as it can, and (c)'s shorter queue alone would set the ratio).
    const tailRate = Math.max(100, Math.round(s1.rps / 2));
    const bareAgain = await start('bench/baselines/fastify-get.ts', { DATABASE_URL: store.url, BENCH_ORG_ID: big.scope.orgId });
    const [tailBare, tailOne] = await measureInTurn([
      { server: bareAgain, spec: specFor(bareAgain, { kind: 'random-id', path: '/contacts/', idsFile, rate: tailRate }) },
      { server: service, spec: specFor(service, { ...getOneSpec, rate: tailRate }) },
    ], [200], settle);
    await stop(bareAgain);

    // 1x2 (SQLite): the same reads by as many whole service processes as cores (Node's cluster,
    // serving only), in turn with the service on one core. With two cores in all the load generator
    // shares the second one.
    let twoCores: StoreResult['scenarios']['s1x2_two_cores'] = null;
    if (kind === 'sqlite' && pinned) {
      const processes = TWO_SERVER_CORES.split(',').length;
      const cluster = await start('bench/cluster-server.ts', { ...serviceEnv(store.url, RAISED_LIMITS), BENCH_PROCESSES: String(processes) }, TWO_SERVER_CORES, logFile);
      const [one, two] = await measureInTurn([{ server: service, spec: specFor(service, getOneSpec) }, { server: cluster, spec: specFor(cluster, getOneSpec) }], [200], settle);
      await stop(cluster);
      const sharedWithLoad = TWO_SERVER_CORES.split(',').includes(String(LOAD_CORE));
      const [service1, load1] = [one.cpuUsPerRequest, one.loadCpuUsPerRequest];
      const shared = service1 && load1 ? Math.round(((2 * service1) / (service1 + load1)) * 1000) / 1000 : null;
      twoCores = { oneCore: one, twoCores: two, cores: TWO_SERVER_CORES, processes, sharedWithLoad, bound: sharedWithLoad ? shared : processes };
    }

    const firstStarted = performance.now();
    const first = await getJson<{ pagination: { total: number } }>(`${service.url}/v1/contacts?limit=50`, big.token);
    const firstMs = Math.round((performance.now() - firstStarted) * 100) / 100;
    if (first.pagination.total !== big.contacts) throw new Error(`list total ${first.pagination.total}, expected ${big.contacts}`);
    await service.resetStats();
    const s2 = { ...await listFirst(service), total: first.pagination.total, coldMs: firstMs };
    const underList = await service.stats();
    await noteRss('s2');

    // 7: GET one and the first page at the large size against the same on the small store, in turn.
    let growth: StoreResult['scenarios']['s7_growth'] = null;
    if (small) {
      log(`${kind}: scenario 7, ${options.growthBase.toLocaleString('en')} against ${options.contacts.toLocaleString('en')} contacts in turn`);
      const smallService = await start('bench/instrumented-server.ts', serviceEnv(small.store.url, RAISED_LIMITS));
      const smallAuth = { authorization: `Bearer ${small.token}` };
      const [smallOne, largeOne] = await measureInTurn([
        { server: smallService, spec: specFor(smallService, { ...getOneSpec, idsFile: small.idsFile, headers: smallAuth }) },
        { server: service, spec: specFor(service, getOneSpec) },
      ], [200], settle);
      const [smallList, largeList] = await measureInTurn([
        { server: smallService, spec: specFor(smallService, { ...listFirstSpec, headers: smallAuth }) },
        { server: service, spec: specFor(service, listFirstSpec) },
      ], [200], settle);
      await stop(smallService);
      growth = { base: options.growthBase, small: { getOne: smallOne, listFirst: smallList }, large: { getOne: largeOne, listFirst: largeList } };
    }

    // 2u: the same list filtered by created_after, each request a value no request asked before, in
    // turn with baseline (e) running the same page-plus-count SQL for the same values.
    const created = [Math.floor(EPOCH_MS / 1000), Math.ceil((EPOCH_MS + big.contacts) / 1000)] as [number, number];
    // Baseline (e) and the service in turn on one uncached `sequence` of list filters, once `check`
    // has passed. Ten connections: an uncached count costs milliseconds, and fifty would queue past a round.
    const uncachedInTurn = async (sequence: 'created-range' | 'rare-title' | 'title-word', barePath: string, check?: (bare: Server) => Promise<void>) => {
      const bare = await start('bench/baselines/fastify-list.ts', { DATABASE_URL: store.url, BENCH_ORG_ID: big.scope.orgId, BENCH_ORG_CONTACTS: String(big.contacts) });
      await check?.(bare);
      const figures = await measureInTurn([
        { server: bare, spec: specFor(bare, { kind: sequence, path: barePath, range: created, connections: 10 }) },
        { server: service, spec: specFor(service, { kind: sequence, path: '/v1/contacts?limit=50&', range: created, headers: auth, connections: 10 }) },
      ], [200], settle);
      await stop(bare);
      return figures;
    };
    const [e, s2u] = await uncachedInTurn('created-range', '/contacts?');
    await noteRss('s2u');

    // 19: title contains one of 200 words, with a created_after, every request new, in turn with
    // baseline (h), which issues the page and its count as a data API does. First, a few values
    // where the measured sequence never goes (the last combinations; three rounds take the first
    // three quarters): both answer the contacts the fixtures say, and the same page.
    const peerMatches: number[] = [];
    const [h, s19raw] = await uncachedInTurn('title-word', '/peer?', async (bare) => {
      const combinations = titleWordCombinations(created[0], created[1]);
      for (let n = combinations - 3; n < combinations; n++) {
        const query = titleWord(n, created[0], created[1]);
        const params = new URLSearchParams(query);
        const [word, after] = [params.get('title')!.toLowerCase(), Number(params.get('created_after'))];
        let expected = 0;
        for (let i = 0; i < big.contacts; i++) if (Math.floor((EPOCH_MS + i) / 1000) >= after && contactFields(i).title.toLowerCase().includes(word)) expected++;
        const [answer, bareAnswer] = await Promise.all([
          getJson<{ data: Array<{ id: string }>; pagination: { total: number } }>(`${service.url}/v1/contacts?limit=50&${query}`, big.token),
          getJson<{ data: Array<{ id: string }>; total: number }>(`${bare.url}/peer?${query}`),
        ]);
        const ids = (rows: Array<{ id: string }>) => rows.slice(0, 50).map((c) => c.id).join();
        if (answer.pagination.total !== expected || bareAnswer.total !== expected || ids(answer.data) !== ids(bareAnswer.data)) {
          throw new Error(`19: ${query} found ${answer.pagination.total} contacts, the baseline ${bareAnswer.total}, expected ${expected}`);
        }
        peerMatches.push(expected);
      }
    });
    const s19 = { ...s19raw, matches: peerMatches };
    await noteRss('s19');

    // 9p: responsiveness. GET one on a single connection, 200 a second (a client among others, not
    // a load of its own), alone and while 50 connections run uncached filtered lists (values past
    // those 2u asked), each a count over the tenant's contacts. Rounds of at least 3 s: under that
    // load a list takes about a second.
    const roundSeconds = Math.max(3, options.roundSeconds);
    const probeSpec = specFor(service, { ...getOneSpec, connections: 1, rate: 200, roundSeconds });
    const probeAlone = await measure(service, probeSpec, [200]);
    const heavy = runLoad(specFor(service, { kind: 'created-range', path: '/v1/contacts?limit=50&', range: created, headers: auth, connections: 50, sequenceStart: 1_000_000, roundSeconds }));
    const probeUnderLoad = await measure(service, probeSpec, [200]);
    const heavyFigure = summarize(await heavy, [200], null);
    await noteRss('s9p');

    const deepest = Math.floor((big.contacts - 1) / 50) + 1 - options.walkWindow + 1;
    const pages = [...new Set(options.walkPages.map((p) => Math.min(p, deepest)))].filter((p) => p >= 1);
    const walk = await runWalk({ url: service.url, path: '/v1/contacts', headers: auth, limit: 50, pages, window: options.walkWindow, warmupPages: options.quick ? 50 : 300 });
    await noteRss('s3');

    const titlePath = `/v1/contacts?limit=50&title=${RARE_SUBSTRING}`;
    const titleStarted = performance.now();
    const titled = await getJson<{ pagination: { total: number } }>(`${service.url}${titlePath}`, big.token);
    const titleMs = Math.round((performance.now() - titleStarted) * 100) / 100;
    const expectedTitled = Math.ceil(big.contacts / 100);
    if (titled.pagination.total !== expectedTitled) throw new Error(`title total ${titled.pagination.total}, expected ${expectedTitled}`);
    const s4 = { ...(await load(service, { kind: 'fixed', path: titlePath, headers: auth })), total: titled.pagination.total, substring: RARE_SUBSTRING, coldMs: titleMs };
    await noteRss('s4');

    // 4u: title contains, each request a piece of the rare title in its own mix of cases (the same
    // contacts as scenario 4) with a created_before no request asked before, in turn with baseline
    // (e) running the service's statements for the same values. First, a few values where the
    // measured sequence never goes: the two must find the same contacts.
    const [eTitled, s4u] = await uncachedInTurn('rare-title', '/titled?', async (bare) => {
      for (let i = 900_000_000; i < 900_000_003; i++) {
        const query = rareTitle(i, created[1]);
        const [answer, bareAnswer] = await Promise.all([
          getJson<{ data: Array<{ id: string }>; pagination: { total: number } }>(`${service.url}/v1/contacts?limit=50&${query}`, big.token),
          getJson<{ data: Array<{ id: string }>; total: number }>(`${bare.url}/titled?${query}`),
        ]);
        const ids = (rows: Array<{ id: string }>) => rows.slice(0, 50).map((c) => c.id).join();
        if (answer.pagination.total !== expectedTitled || bareAnswer.total !== expectedTitled || ids(answer.data) !== ids(bareAnswer.data)) {
          throw new Error(`4u: ${query} found ${answer.pagination.total} contacts, the baseline ${bareAnswer.total}, expected ${expectedTitled}`);
        }
      }
    });
    await noteRss('s4u');

    // Before scenario 5, whose new contacts would add to the search's expected total.
    log(`${kind}: scenarios 13 and 14 (search)`);
    const search = await searchScenarios(service, big.token, big.contacts, specFor, options.quick ? 5 : 15);
    await noteRss('s13');

    // 5 in turn with baseline (d): creates are what this machine's minutes sway most (a log sync
    // each), and (d) measured apart ran 1.56 times as fast in one full run as in the one before.
    log(`${kind}: baseline (d) and scenario 5 in turn`);
    const createContact = { kind: 'create', method: 'POST', path: '/v1/contacts', headers: auth, listId: big.listIds[0], idempotency: true } as const;
    const bareInsert = await start('bench/baselines/fastify-insert.ts', { DATABASE_URL: store.url, BENCH_ORG_ID: 'org_baseline_inserts' });
    const [d, s5] = await inTurn([
      { server: bareInsert, spec: { kind: 'create', method: 'POST', path: '/contacts', listId: big.listIds[0] } },
      { server: service, spec: createContact },
    ], [201]);
    await stop(bareInsert);
    await database.db.deleteFrom('contacts').where('org_id', '=', 'org_baseline_inserts').execute();
    await noteRss('s5');

    log(`${kind}: scenarios 15 to 17 (deals)`);
    const bareList = await start('bench/baselines/fastify-list.ts', { DATABASE_URL: store.url, BENCH_ORG_ID: big.scope.orgId, BENCH_ORG_CONTACTS: String(big.contacts) });
    const deals = await dealScenarios(service, big.token, seededDeals, idsFile, load, inTurn, bareList, createContact);
    await stop(bareList);
    await noteRss('s17');

    // Scenarios 11 and 12: batch asserts of 100 new contacts carrying a custom field, then the first
    // page filtered by that field (an index read on field_values, with its exact total). Each batch
    // carries 100 records, so a few connections keep as many records in flight as scenario 5's
    // creates do; rounds last at least 3 s so that whole batches complete within them. In turn with
    // scenario 5's creates, which the target divides by.
    const defined = await fetch(`${service.url}/v1/fields`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ object: 'contacts', name: 'segment', data_type: 'enum', options: { values: SEGMENTS } }),
    });
    if (defined.status !== 201) throw new Error(`define field: ${defined.status} ${await defined.text()}`);
    const [s11raw, creates] = await inTurn([
      { server: service, spec: { kind: 'assert-batch', method: 'PUT', path: '/v1/contacts/assert/batch', headers: auth, listId: big.listIds[0], connections: 4, roundSeconds: Math.max(3, options.roundSeconds) } },
      { server: service, spec: createContact, expected: [201] },
    ]);
    const s11 = { ...s11raw, recordsPerSecond: s11raw.rps * 100, creates };
    const filterPath = '/v1/contacts?limit=50&custom_fields.segment=gold';
    const filtered = await getJson<{ pagination: { total: number } }>(`${service.url}${filterPath}`, big.token);
    const s12 = { ...(await load(service, { kind: 'fixed', path: filterPath, headers: auth })), total: filtered.pagination.total };
    await noteRss('s11');
    const after = await service.stats();

    // 6: a second service with the production rate limits, in turn with scenario 1 on the first.
    log(`${kind}: scenario 6 with the production rate limits, in turn with GET one`);
    const limited = await start('bench/instrumented-server.ts', serviceEnv(store.url, {}));
    const [s6raw, s6getOne] = await measureInTurn([
      { server: limited, spec: specFor(limited, getOneSpec) },
      { server: service, spec: specFor(service, getOneSpec) },
    ], [200, 429], settle);
    await stop(limited);
    await stop(service);
    const perSecond = (code: string) => median(s6raw.rounds.map((r) => (r.statuses[code] ?? 0) / r.seconds));

    const webhooks = await benchWebhooks({
      kind, storeUrl: store.url, database, options, log, start, stop, load, env: serviceEnv(store.url, RAISED_LIMITS), getOneSpec,
    });

    // A process of its own, so its peak RSS is the import's.
    const importRows = options.quick ? 20_000 : 1_000_000;
    log(`${kind}: scenario 18, a CSV import of ${importRows.toLocaleString('en')} contacts`);
    const importer = await start('bench/instrumented-server.ts', serviceEnv(store.url, RAISED_LIMITS));
    const importOrg = await createSeededOrg(database, 'Import org');
    const imported = await importScenario(importer, importOrg.token, importOrg.listIds[0], ctx.workDir, importRows);
    await stop(importer);

    const mail = await mailScenarios({
      kind, storeUrl: store.url, database, options, workDir: ctx.workDir, log, start, stop, inTurn, env: serviceEnv(store.url, RAISED_LIMITS), getOneSpec,
    });
    const sequenced = await sequenceScenarios({
      kind, database, options, log: (m) => log(`${kind}: ${m}`), start, stop, inTurn, env: serviceEnv(store.url, RAISED_LIMITS), getOneSpec,
    });
    const voice = await voiceScenarios({
      kind, database, options, workDir: ctx.workDir, log: (m) => log(`${kind}: ${m}`), start, stop, inTurn, env: serviceEnv(store.url, RAISED_LIMITS), getOneSpec,
    });

    return {
      store: kind,
      seed: { contacts: big.contacts, deals: seededDeals.deals, smallOrgs: options.smallOrgs, smallOrgContacts: options.smallOrgContacts, seconds: Math.round(seedSeconds * 10) / 10 },
      baselines: { c_get_by_id: c, g_get_floor: g, d_insert: d, e_filtered_page: e, e_titled_page: eTitled, h_peer_list: h },
      scenarios: {
        s1_get_one: s1,
        s1x2_two_cores: twoCores,
        s1p_tail: { rate: tailRate, getOne: tailOne, bare: tailBare },
        s2_list_first_page: s2,
        s2u_list_uncached: s2u,
        s9p_responsiveness: { alone: probeAlone, underLoad: probeUnderLoad, load: heavyFigure },
        s3_cursor_walk: { ...walk, deepest: Math.max(...pages) },
        s4_title_contains: s4,
        s4u_title_uncached: s4u,
        s19_peer_list: s19,
        s5_create: s5,
        s6_rate_limited: { ...s6raw, rejectedPerSecond: Math.round(perSecond('429')), allowedPerSecond: Math.round(perSecond('200')), getOne: s6getOne },
        s7_growth: growth,
        s11_assert_batch: s11,
        s12_custom_field_filter: s12,
        ...search,
        ...deals,
        s8_resources: {
          peakRssMb: Math.round(after.peakRssBytes / 1e5) / 10,
          eldUnderListLoad: { p50: underList.eld.p50, p99: underList.eld.p99, max: underList.eld.max },
          eldMaxMs: after.eldMaxEver,
          rssAfterMb: rssAfter,
        },
        ...webhooks,
        ...imported,
        ...mail,
        ...sequenced,
        ...voice,
      },
    };
  } finally {
    for (const server of [...servers]) await server.stop();
    await database.close();
    await store.drop();
    await small?.store.drop();
  }
}

/**
 * A new store's organizations at the start of a run: the small ones, and the large one's first
 * `growthBase` contacts, whose ids go to `idsFile` (and are returned).
 */
async function seedSmallSize(kind: StoreKind, database: Database, options: BenchOptions, idsFile: string) {
  await migrateToLatest(database);
  for (let i = 0; i < options.smallOrgs; i++) await seedContacts(database, await createSeededOrg(database, `Small org ${i + 1}`), options.smallOrgContacts);
  const big = await createSeededOrg(database, 'Large org', 1_000_000, { scoreField: true });
  const ids: string[] = [];
  await seedContacts(database, big, options.growthBase, (id) => ids.push(id));
  writeFileSync(idsFile, ids.join('\n'));
  if (kind === 'postgres') await sql`vacuum analyze`.execute(database.db);
  return { big, ids };
}

/** Scenario 7's second store: the same organizations as the first at the start of the run, left at that size. */
async function smallStore(kind: StoreKind, pgServer: string | undefined, options: BenchOptions, idsFile: string) {
  const store = await createStore(kind, pgServer);
  const database = openDatabase(store.url);
  try {
    const { big } = await seedSmallSize(kind, database, options, idsFile);
    return { store, token: big.token, idsFile };
  } catch (error) {
    await store.drop();
    throw error;
  } finally {
    await database.close();
  }
}
