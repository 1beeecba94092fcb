// The cursor walk (scenario 3), run as its own process on the load core: follows next_cursor from
// page 1 one request at a time and times every page. Every page of the walk is a different request,
// so no cache answers it: the latency at depth is the cost of the keyset query at that depth. The
// figure for page P is the median over pages P to P + window - 1. A short walk with another page
// size first warms the code path without warming any page of the measured walk.
export interface WalkSpec {
  url: string;
  /** The list path without limit or cursor, e.g. /v1/contacts */
  path: string;
  headers: Record<string, string>;
  limit: number;
  pages: number[];
  window: number;
  warmupPages: number;
}

export interface WalkResult {
  /** Median latency in milliseconds of the window starting at each page. */
  pages: Record<string, { p50: number; p90: number; samples: number }>;
  walked: number;
  seconds: number;
}

async function walk(spec: WalkSpec, limit: number, lastPage: number, onPage: (page: number, ms: number) => void): Promise<number> {
  let cursor: string | null = null;
  let page = 1;
  for (; page <= lastPage; page++) {
    const url = `${spec.url}${spec.path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const started = performance.now();
    const response = await fetch(url, { headers: spec.headers });
    const body = (await response.json()) as { next_cursor: string | null };
    onPage(page, performance.now() - started);
    if (response.status !== 200) throw new Error(`page ${page}: status ${response.status} ${JSON.stringify(body)}`);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return page;
}

export async function runWalk(spec: WalkSpec): Promise<WalkResult> {
  await walk(spec, spec.limit - 1, spec.warmupPages, () => {});
  const started = performance.now();
  const samples = new Map<number, number[]>(spec.pages.map((p) => [p, []]));
  const last = Math.max(...spec.pages) + spec.window - 1;
  const walked = await walk(spec, spec.limit, last, (page, ms) => {
    for (const p of spec.pages) if (page >= p && page < p + spec.window) samples.get(p)!.push(ms);
  });
  const pages: WalkResult['pages'] = {};
  for (const [p, list] of samples) {
    const sorted = list.sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 1000) / 1000;
    pages[p] = { p50: at(0.5), p90: at(0.9), samples: sorted.length };
  }
  return { pages, walked, seconds: Math.round((performance.now() - started) / 10) / 100 };
}

if (import.meta.main) {
  runWalk(JSON.parse(process.argv[2]) as WalkSpec).then((result) => {
    process.stdout.write(JSON.stringify(result));
  }, (error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
