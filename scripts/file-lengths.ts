// `npm run lint` runs this: fails when a source file of src/ passes 400 lines, the limit past which a
// module is no longer one a reader holds at once (aim for about 250). Generated types
// (`*.generated.ts`) and data (`*.data.ts`) are exempt.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const LIMIT = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|js)$/.test(e.name) && !/\.(generated|data)\.ts$/.test(e.name) ? [path] : [];
  });
}

const long = sources(join(ROOT, 'src'))
  .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
  .filter((f) => f.lines > LIMIT);
for (const { file, lines } of long) console.error(`${relative(ROOT, file)}: ${lines} lines, over the limit of ${LIMIT}: split it into modules of one concern each`);
if (long.length > 0) process.exit(1);
