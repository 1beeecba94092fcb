// Loaded before the service's own modules (`node --import=./src/compile-cache.js`, as `npm start`,
// `npm run worker` and `npm run cli` do): turns on Node's module compile cache, which keeps every
// module's type-stripped JavaScript and V8 code on disk. A process that finds all of its modules
// there neither strips types nor compiles them again: it starts faster, and it never loads the
// TypeScript stripper, whose WebAssembly memory (about 16 MB) would otherwise stay for the life of
// the process. The first start after an install or an upgrade fills the cache. NODE_COMPILE_CACHE
// names another directory; NODE_DISABLE_COMPILE_CACHE=1 turns the cache off.
import { enableCompileCache } from 'node:module';
import { env } from 'node:process';
import { fileURLToPath, URL } from 'node:url';

enableCompileCache(env.NODE_COMPILE_CACHE || fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)));
