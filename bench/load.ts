// The load generator, run as its own process (pinned to its own core by the runner): autocannon
// against one URL, a warm-up and then timed rounds, each with its own latency record at microsecond
// precision (autocannon's own histogram keeps whole milliseconds). Prints one JSON document.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { contactFields, SEGMENTS } from './fixtures.ts';

export interface LoadSpec {
  url: string;
  connections: number;
  warmupSeconds: number;
  rounds: number;
  roundSeconds: number;
  method?: 'GET' | 'POST' | 'PUT';
  /** `fixed`: the same request every time; `random-id`: path + a random id from idsFile; `create`: a new contact body each time. */
  kind: 'fixed' | 'random-id' | 'create' | 'assert-batch';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  idsFile?: string;
  /** For `create`: the list to create contacts on, and whether each request carries a fresh Idempotency-Key. */
  listId?: string;
  idempotency?: boolean;
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
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
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

function requestMaker(spec: LoadSpec): (req: Request) => Request {
  const headers = { ...spec.headers };
  if (spec.kind === 'random-id') {
    const ids = readFileSync(spec.idsFile!, 'utf8').split('\n').filter(Boolean);
    return (req) => ({ ...req, path: spec.path + ids[Math.floor(Math.random() * ids.length)] });
  }
  if (spec.kind === 'create') {
    const run = `${process.pid}-${Date.now()}`;
    let n = 0;
    return (req) => {
      const i = n++;
      const fields = contactFields(i);
      const body = JSON.stringify({ list_id: spec.listId, ...fields, work_email: `bench.${run}.${i}@example.com` });
      return {
        ...req,
        body,
        headers: { ...headers, 'content-type': 'application/json', ...(spec.idempotency ? { 'idempotency-key': `bench-${run}-${i}` } : {}) },
      };
    };
  }
  if (spec.kind === 'assert-batch') {
    // 100 new contacts per request, each with a custom field value the filter scenario reads.
    const run = `${process.pid}-${Date.now()}`;
    let n = 0;
    return (req) => {
      const records = Array.from({ length: 100 }, () => {
        const i = n++;
        return { list_id: spec.listId, ...contactFields(i), work_email: `batch.${run}.${i}@example.com`, custom_fields: { segment: SEGMENTS[i % SEGMENTS.length] } };
      });
      return { ...req, body: JSON.stringify({ records }), headers: { ...headers, 'content-type': 'application/json' } };
    };
  }
  return (req) => req;
}

async function round(spec: LoadSpec, seconds: number, setupRequest: (req: Request) => Request): Promise<RoundResult> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: seconds,
    timeout: 30,
    requests: [{ method: spec.method ?? 'GET', path: spec.path, headers: spec.headers ?? {}, body: spec.body, setupRequest }],
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const result = await instance;
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
  };
}

export async function runLoad(spec: LoadSpec): Promise<{ warmup: RoundResult | null; rounds: RoundResult[] }> {
  const setupRequest = requestMaker(spec);
  const warmup = spec.warmupSeconds > 0 ? await round(spec, spec.warmupSeconds, setupRequest) : null;
  const rounds: RoundResult[] = [];
  for (let i = 0; i < spec.rounds; i++) rounds.push(await round(spec, spec.roundSeconds, setupRequest));
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
