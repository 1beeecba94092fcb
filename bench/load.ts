// The load generator, run as its own process (pinned to its own core by the runner): autocannon
// against one URL (or one short sequence of requests), a warm-up and then timed rounds, each with its own latency record at microsecond
// precision (autocannon's own histogram keeps whole milliseconds). Prints one JSON document.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { contactFields, dealFields, RARE_PIECES, SEGMENTS, TITLE_WORDS } from './fixtures.ts';

export interface LoadSpec {
  url: string;
  connections: number;
  warmupSeconds: number;
  rounds: number;
  roundSeconds: number;
  method?: 'GET' | 'POST' | 'PUT';
  /**
   * `fixed`: the same request every time; `random-id`: path + a random id from idsFile; `rotate`:
   * `paths` in turn; `create`: a new contact body each time; `assert-batch`: 100 new contacts per
   * request; `deal-with-contacts`: POST path, a new deal with three random contacts of idsFile;
   * `created-range`: path + `created_after=…&created_before=…` (see createdWindow) from a fixed
   * pseudo-random sequence starting at `sequenceStart`, so no answer comes from a cache;
   * `rare-title`: path + `title=…&created_before=…` (see rareTitle), uncached the same way;
   * `title-word`: path + `title=…&created_after=…` (see titleWord), each request a combination no
   * request of the run asked before.
   * `twilio-callbacks`: Twilio's signed status callbacks of the calls of `callsFile` (see
   * twilioCallback), each a state the call has not reached but for one in ten, a duplicate or a
   * late one.
   */
  kind: 'fixed' | 'random-id' | 'rotate' | 'created-range' | 'rare-title' | 'title-word' | 'create' | 'assert-batch' | 'deal-with-contacts' | 'twilio-callbacks';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  idsFile?: string;
  paths?: string[];
  /**
   * For `created-range`, `rare-title` and `title-word`: the unix seconds the seeded records were
   * created in, and where in the sequence to start (measureInTurn starts round k at k × 1,000,000).
   */
  range?: [number, number];
  sequenceStart?: number;
  /** For `create`: the list to create contacts on; for `create` and `deal-with-contacts`: whether each create carries a fresh Idempotency-Key. */
  listId?: string;
  idempotency?: boolean;
  /**
   * For `twilio-callbacks`: one call a line (`<callback path> <CallSid> <To>`), split into `slices`
   * (round k of measureInTurn takes slice k), and the Auth Token that signs the callbacks.
   */
  callsFile?: string;
  slices?: number;
  authToken?: string;
  /** Requests per second over all connections; unset: each connection sends its next request as soon as it has an answer. */
  rate?: number;
}

export interface RoundResult {
  seconds: number;
  requests: number;
  rps: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** CPU time (user + system) the load generator itself used in the round, in seconds. */
  loadCpuSeconds: number;
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** A request of autocannon's sequence. */
interface Step extends Request {
  setupRequest?: (req: Request) => Request;
}

interface Instance extends PromiseLike<{ duration: number; errors: number; timeouts: number; statusCodeStats: Record<string, { count: number }> }> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): void;
}
type Autocannon = (options: Record<string, unknown>) => Instance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const DEAL_ROLES = ['Decision maker', 'Champion', 'User'];
const readIds = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
const json = { 'content-type': 'application/json' };

/** A 32-bit integer hash (mulberry32's finalizer): the fixed pseudo-random sequence of `created-range`. */
function hash(i: number): number {
  let t = (i + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/**
 * Request i's filter: a pseudo-random `created_after` within [lo, hi) and a `created_before` past
 * every record whose value carries i, so that no two requests share a query string (a cache key)
 * while each still selects what its `created_after` says.
 */
export function createdWindow(i: number, lo: number, hi: number): string {
  return `created_after=${lo + (hash(i) % Math.max(1, hi - lo))}&created_before=${hi + 1 + i}`;
}

/**
 * Request i's title search: a piece of the rare title (RARE_PIECES) with the case of each letter
 * from a fixed pseudo-random sequence, so the values vary as people's searches do while every one
 * selects the same contacts, and a `created_before` past every record whose value carries i, so no
 * two requests share a query string (a cache key).
 */
export function rareTitle(i: number, hi: number): string {
  const piece = RARE_PIECES[hash(i) % RARE_PIECES.length];
  const cases = hash(i + 0x9e3779b9);
  const title = [...piece].map((c, k) => ((cases >>> (k % 32)) & 1 ? c.toUpperCase() : c)).join('');
  return `title=${encodeURIComponent(title)}&created_before=${hi + 1 + i}`;
}

/** Letters of a word whose case the sequence sets: 16 spellings of each. */
const CASED_LETTERS = 4;

/**
 * Request n's search of scenario 19: a word of TITLE_WORDS with the case of its first letters from
 * the sequence, and a `created_after` in the first quarter of [lo, hi), as a client searching
 * recent contacts by title asks. The combinations (200 words × 16 spellings × the quarter's seconds)
 * are taken in an order that mixes words and times (a step prime to their number), each once for
 * n below their number; the same contacts match whatever the spelling.
 */
export function titleWord(n: number, lo: number, hi: number): string {
  const seconds = Math.max(1, Math.floor((hi - lo) / 4));
  const combinations = TITLE_WORDS.length * 2 ** CASED_LETTERS * seconds;
  const k = (n * 7919) % combinations;
  const word = TITLE_WORDS[k % TITLE_WORDS.length];
  const rest = Math.floor(k / TITLE_WORDS.length);
  const cases = rest % 2 ** CASED_LETTERS;
  const title = [...word].map((c, i) => (i < CASED_LETTERS && (cases >>> i) & 1 ? c.toUpperCase() : c)).join('');
  return `title=${title}&created_after=${lo + Math.floor(rest / 2 ** CASED_LETTERS)}`;
}

/** The number of combinations titleWord has for a range: a run's requests stay under it. */
export const titleWordCombinations = (lo: number, hi: number) => TITLE_WORDS.length * 2 ** CASED_LETTERS * Math.max(1, Math.floor((hi - lo) / 4));

/** Calls a block of `twilioCallback` moves through its three states: far more than the requests in flight, so each call's states arrive in order. */
export const CALLBACK_BLOCK = 500;
/** The Account SID of the bench's Twilio connection, which its callbacks carry. */
export const BENCH_ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
export const CALLBACK_STATES = ['ringing', 'in-progress', 'completed'] as const;

/**
 * Request j of a slice of `calls` calls: in each block of CALLBACK_BLOCK calls first every call's
 * `ringing`, then its `in-progress` (answered by a person), then `completed` with its CallDuration,
 * each moving the call forward; the tenth request of ten is a replay answered `unchanged`, in turn
 * the request just before it again (a duplicate, often while the first is in flight) and a late
 * `ringing` of a call completed in an earlier block (out of order; a duplicate in the first block).
 * Past the slice's 3 × calls moves the sequence starts over (every answer `unchanged`: the
 * scenario's check counts them).
 */
export function twilioCallback(j: number, calls: number): { call: number; state: (typeof CALLBACK_STATES)[number] } {
  const group = Math.floor(j / 10);
  const real = (k: number) => {
    const r = k % (3 * calls);
    const block = Math.floor(r / (3 * CALLBACK_BLOCK));
    const inBlock = r % (3 * CALLBACK_BLOCK);
    return { block, call: block * CALLBACK_BLOCK + (inBlock % CALLBACK_BLOCK), state: CALLBACK_STATES[Math.floor(inBlock / CALLBACK_BLOCK)] };
  };
  if (j % 10 < 9) return real(group * 9 + (j % 10));
  const previous = real(group * 9 + 8);
  if (group % 2 === 0 || previous.block === 0) return previous;
  return { call: (group * 7919) % (previous.block * CALLBACK_BLOCK), state: 'ringing' };
}

/**
 * Twilio's status callback of a call (`line`: its callback path, CallSid and To) reaching `state`,
 * as Twilio posts it to `url` + path: form-encoded and signed with the Auth Token (HMAC-SHA1,
 * base64, of the URL followed by the parameters sorted by name, each name then value).
 */
export function signedCallback(url: string, authToken: string, line: string[], state: string, call = 0): { path: string; body: string; headers: Record<string, string> } {
  const [path, sid, to] = line;
  const params: Record<string, string> = {
    AccountSid: BENCH_ACCOUNT_SID, ApiVersion: '2010-04-01', CallSid: sid, CallStatus: state, Direction: 'outbound-api', From: '+14155550100', To: to,
    ...(state === 'ringing' ? {} : { AnsweredBy: 'human' }), ...(state === 'completed' ? { CallDuration: String(30 + (call % 90)) } : {}),
  };
  const signature = createHmac('sha1', authToken).update(`${url}${path}${Object.keys(params).sort().map((k) => k + params[k]).join('')}`).digest('base64');
  return { path, body: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature } };
}

/** The request sequence each connection repeats: one request, or the four of a deal with its contacts. */
function requestsOf(spec: LoadSpec): Step[] {
  const headers = { ...spec.headers };
  const base = { method: spec.method ?? 'GET', path: spec.path, headers, body: spec.body };
  const run = `${process.pid}-${Date.now()}`;
  let n = 0;
  if (spec.kind === 'random-id') {
    const ids = readIds(spec.idsFile!);
    return [{ ...base, setupRequest: (req) => ({ ...req, path: spec.path + ids[Math.floor(Math.random() * ids.length)] }) }];
  }
  if (spec.kind === 'created-range') {
    const [lo, hi] = spec.range!;
    let i = spec.sequenceStart ?? 0;
    return [{ ...base, setupRequest: (req) => ({ ...req, path: `${spec.path}${createdWindow(i++, lo, hi)}` }) }];
  }
  if (spec.kind === 'rare-title') {
    let i = spec.sequenceStart ?? 0;
    return [{ ...base, setupRequest: (req) => ({ ...req, path: `${spec.path}${rareTitle(i++, spec.range![1])}` }) }];
  }
  if (spec.kind === 'title-word') {
    // Round k (sequenceStart k × 1,000,000) takes the k-th quarter of the combinations, so the
    // rounds of a server never ask the same request.
    const [lo, hi] = spec.range!;
    const start = spec.sequenceStart ?? 0;
    let n = Math.floor(start / 1_000_000) * Math.floor(titleWordCombinations(lo, hi) / 4) + (start % 1_000_000);
    return [{ ...base, setupRequest: (req) => ({ ...req, path: `${spec.path}${titleWord(n++, lo, hi)}` }) }];
  }
  if (spec.kind === 'twilio-callbacks') {
    const lines = readIds(spec.callsFile!).map((line) => line.split(' '));
    const size = Math.floor(lines.length / (spec.slices ?? 1));
    const start = spec.sequenceStart ?? 0;
    const slice = lines.slice(Math.floor(start / 1_000_000) * size).slice(0, size);
    let j = start % 1_000_000;
    return [{
      ...base,
      method: 'POST',
      setupRequest: (req) => {
        const { call, state } = twilioCallback(j++, slice.length);
        return { ...req, ...signedCallback(spec.url, spec.authToken!, slice[call], state, call) };
      },
    }];
  }
  if (spec.kind === 'rotate') {
    return [{ ...base, setupRequest: (req) => ({ ...req, path: spec.paths![n++ % spec.paths!.length] }) }];
  }
  if (spec.kind === 'create') {
    return [{
      ...base,
      setupRequest: (req) => {
        const i = n++;
        const fields = contactFields(i);
        const body = JSON.stringify({ list_id: spec.listId, ...fields, work_email: `bench.${run}.${i}@example.com` });
        return { ...req, body, headers: { ...headers, ...json, ...(spec.idempotency ? { 'idempotency-key': `bench-${run}-${i}` } : {}) } };
      },
    }];
  }
  if (spec.kind === 'assert-batch') {
    // 100 new contacts per request, each with a custom field value the filter scenario reads.
    return [{
      ...base,
      setupRequest: (req) => {
        const records = Array.from({ length: 100 }, () => {
          const i = n++;
          return { list_id: spec.listId, ...contactFields(i), work_email: `batch.${run}.${i}@example.com`, custom_fields: { segment: SEGMENTS[i % SEGMENTS.length] } };
        });
        return { ...req, body: JSON.stringify({ records }), headers: { ...headers, ...json } };
      },
    }];
  }
  if (spec.kind === 'deal-with-contacts') {
    // A new deal with three different contacts (random ids of idsFile) put on it in the same request.
    const ids = readIds(spec.idsFile!);
    return [{
      ...base,
      method: 'POST',
      setupRequest: (req) => {
        const i = n++;
        const picked = new Set<string>();
        while (picked.size < 3) picked.add(ids[Math.floor(Math.random() * ids.length)]);
        const contacts = [...picked].map((contact_id, k) => ({ contact_id, role: DEAL_ROLES[k] }));
        const { name, amount, currency, owner, source } = dealFields(i);
        return { ...req, body: JSON.stringify({ name, amount, currency, owner, source, contacts }), headers: { ...headers, ...json, ...(spec.idempotency ? { 'idempotency-key': `bench-deal-${run}-${i}` } : {}) } };
      },
    }];
  }
  return [base];
}

async function round(spec: LoadSpec, seconds: number, requests: Step[]): Promise<RoundResult> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    duration: seconds,
    timeout: 30,
    requests,
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const cpuBefore = process.cpuUsage();
  const result = await instance;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = Float64Array.from(latencies).sort();
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count;
  const elapsed = result.duration || seconds;
  const round3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    seconds: elapsed,
    requests: sorted.length,
    rps: Math.round(sorted.length / elapsed),
    p50: round3(percentile(sorted, 50)),
    p90: round3(percentile(sorted, 90)),
    p99: round3(percentile(sorted, 99)),
    max: round3(sorted.length ? sorted[sorted.length - 1] : 0),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    loadCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

export async function runLoad(spec: LoadSpec): Promise<{ warmup: RoundResult | null; rounds: RoundResult[] }> {
  const requests = requestsOf(spec);
  const warmup = spec.warmupSeconds > 0 ? await round(spec, spec.warmupSeconds, requests) : null;
  const rounds: RoundResult[] = [];
  for (let i = 0; i < spec.rounds; i++) rounds.push(await round(spec, spec.roundSeconds, requests));
  return { warmup, rounds };
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2]) as LoadSpec;
  runLoad(spec).then((result) => {
    process.stdout.write(JSON.stringify(result));
  }, (error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
