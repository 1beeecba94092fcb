// The random part of the hostile-input walk: FUZZ_RUNS inputs per route and property, drawn from
// FUZZ_SEED. A plain run (CI, `npm test`) draws from a fixed seed at a depth that keeps every shard
// under a minute, so a run is the same each time and a failure replays from the log; `npm run
// test:deep` sets FUZZ_DEEP=1: a fresh seed and ten times the depth. Set FUZZ_SEED and FUZZ_RUNS
// to replay a run, as printed by every shard.
const DEFAULT_RUNS = 40;
const FIXED_SEED = 20_261_128;
const deep = process.env.FUZZ_DEEP === '1';

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS || (deep ? DEFAULT_RUNS * 10 : DEFAULT_RUNS));
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : deep ? Math.floor(Math.random() * 2 ** 31) : FIXED_SEED;
export const fuzz = { numRuns: FUZZ_RUNS, seed: FUZZ_SEED };
/** Per-test time limit: room for the configured number of runs (and fast-check's shrinking). */
export const FUZZ_TIMEOUT = 30_000 + FUZZ_RUNS * 500;
export const replayLine = (what: string) => `${what}: FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS} (set both to replay this run)`;
