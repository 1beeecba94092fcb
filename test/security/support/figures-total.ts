// Adds up the figures the security test files wrote in their last run, per store:
//   npx node test/security/support/figures-total.ts   (reads $SECURITY_FIGURES_DIR or the temp dir)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = process.env.SECURITY_FIGURES_DIR ?? join(tmpdir(), 'rds-security-figures');
const KEYS = ['requests', 'hostileInputs', 'crashRounds', 'acknowledgedRecords', 'recordsLost'] as const;

for (const store of ['sqlite', 'postgres']) {
  const dir = join(root, store);
  if (!existsSync(dir)) continue;
  const total: Record<string, number> = Object.fromEntries(KEYS.map((k) => [k, 0]));
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const figures = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, number>;
    for (const key of KEYS) total[key] += figures[key] ?? 0;
  }
  console.log(`${store}: ${KEYS.map((k) => `${k} ${total[k]}`).join(', ')}`);
}
