// The figures a security test file reports: how many requests it sent, how many hostile inputs it
// generated, how many crash rounds it survived and how many acknowledged records it lost. Each file
// prints them at the end and writes them to $SECURITY_FIGURES_DIR (default: the system temp
// directory) so a run's totals can be added up (docs/security.md quotes the last run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export const figures = {
  requests: 0,
  hostileInputs: 0,
  crashRounds: 0,
  acknowledgedRecords: 0,
  recordsLost: 0,
};

export function reportFigures(file: string, store: string): void {
  const name = basename(file).replace(/\.test\.ts$/, '');
  console.log(`security figures ${store} ${name}: ${JSON.stringify(figures)}`);
  const dir = join(process.env.SECURITY_FIGURES_DIR ?? join(tmpdir(), 'rds-security-figures'), store);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ file: name, store, at: new Date().toISOString(), ...figures }, null, 2)}\n`);
}
