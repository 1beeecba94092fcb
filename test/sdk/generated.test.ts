// The SDK's generated types can never drift from the service: regenerated in memory from the
// document this checkout serves, they must equal the committed sdk/src/openapi.d.ts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { GENERATED_PATH, liveDocument, typesOf } from '../../sdk/scripts/openapi-types.ts';

it('sdk/src/openapi.d.ts is what `npm run sdk:generate` writes today', async () => {
  const fresh = await typesOf(await liveDocument());
  const committed = readFileSync(GENERATED_PATH, 'utf8');
  expect(committed === fresh, 'sdk/src/openapi.d.ts is stale: run `npm run sdk:generate` and commit it').toBe(true);
});

it('the package builds on its own (sdk/tsconfig.json: no service code, Node and the web platform only)', () => {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const result = spawnSync(process.execPath, [tsc, '-p', fileURLToPath(new URL('../../sdk/tsconfig.json', import.meta.url)), '--noEmit'], { encoding: 'utf8' });
  expect(result.stdout + result.stderr).toBe('');
  expect(result.status).toBe(0);
}, 60_000);
