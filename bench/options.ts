// Command-line options of `npm run bench`.
import { parseArgs } from 'node:util';

export interface BenchOptions {
  quick: boolean;
  /** Contacts of the large organization. */
  contacts: number;
  /** Deals of the large organization (scenarios 15 to 17). */
  deals: number;
  /** Its size at the first measurement of growth (scenario 7). */
  growthBase: number;
  smallOrgs: number;
  smallOrgContacts: number;
  connections: number;
  warmupSeconds: number;
  rounds: number;
  roundSeconds: number;
  /** Pages of the cursor walk whose latency is reported, and the pages each figure spans. */
  walkPages: number[];
  walkWindow: number;
  stores: Array<'sqlite' | 'postgres'>;
  output: string;
}

export const USAGE = `Usage: npm run bench -- [--quick] [--contacts N] [--rounds N] [--seconds S] [--store sqlite|postgres]

  --quick        small smoke run (20,000 contacts, 10,000 deals, short rounds), about 2 minutes
  --contacts N   contacts of the large organization (default 1,000,000); its deals are half as
                 many, at most 100,000
  --rounds N     measured rounds per scenario (default 3)
  --seconds S    seconds per round (default 4; 1 with --quick)
  --store NAME   only this store (default: SQLite, and PostgreSQL when BENCH_PG_URL or DATABASE_URL names one)
  --output FILE  results file (default bench/results/latest.json)`;

export function parseOptions(argv: string[], hasPostgres: boolean): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      contacts: { type: 'string' },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      store: { type: 'string' },
      output: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const quick = values.quick;
  const number = (value: string | undefined, fallback: number, name: string) => {
    if (value === undefined) return fallback;
    const n = Number(value.replace(/[_,]/g, ''));
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const contacts = Math.floor(number(values.contacts, quick ? 20_000 : 1_000_000, 'contacts'));
  const stores: BenchOptions['stores'] = values.store ? [values.store as 'sqlite' | 'postgres'] : hasPostgres ? ['sqlite', 'postgres'] : ['sqlite'];
  if (stores.some((s) => s !== 'sqlite' && s !== 'postgres')) throw new Error('--store must be sqlite or postgres');
  if (stores.includes('postgres') && !hasPostgres) throw new Error('--store postgres needs BENCH_PG_URL or DATABASE_URL');
  return {
    quick,
    contacts,
    // 100,000 deals at the default size, 10,000 in the quick run.
    deals: Math.min(100_000, Math.ceil(contacts / 2)),
    growthBase: Math.min(10_000, contacts),
    smallOrgs: 100,
    smallOrgContacts: quick ? 20 : 200,
    connections: 50,
    warmupSeconds: quick ? 0.5 : 2,
    rounds: Math.floor(number(values.rounds, 3, 'rounds')),
    roundSeconds: number(values.seconds, quick ? 1 : 4, 'seconds'),
    walkPages: [1, 100, 1000, 10_000],
    walkWindow: quick ? 20 : 50,
    stores,
    output: values.output ?? 'bench/results/latest.json',
  };
}
