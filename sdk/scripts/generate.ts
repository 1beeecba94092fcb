// `npm run sdk:generate`: writes sdk/src/openapi.d.ts from the OpenAPI document of this checkout.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GENERATED_PATH, liveDocument, typesOf } from './openapi-types.ts';

writeFileSync(GENERATED_PATH, await typesOf(await liveDocument()));
console.log(`wrote ${fileURLToPath(GENERATED_PATH)}`);
