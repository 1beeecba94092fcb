// `npm run db:types`: writes src/db/schema.generated.ts from the migrations. With `--check` (run by
// `npm run lint`) it writes nothing and fails when the file checked in is not what they generate.
import { readFileSync, writeFileSync } from 'node:fs';
import { generateSchemaTypes } from '../src/db/schema-types.ts';

const FILE = new URL('../src/db/schema.generated.ts', import.meta.url);
const generated = await generateSchemaTypes();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(FILE, 'utf8');
  } catch {
    // missing: stale
  }
  if (current !== generated) {
    console.error('src/db/schema.generated.ts is stale: run `npm run db:types` and commit the result.');
    process.exit(1);
  }
} else {
  writeFileSync(FILE, generated);
}
