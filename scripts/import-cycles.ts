// `npm run lint` runs this: fails when modules of different directories of src/ import each other in
// a cycle (the contacts and deals groups did; so did orgs, the sandbox, the registry and the agency
// group). Such a cycle ties together groups, or the kernel and a group, that should be read and
// changed alone, and makes the order modules load in matter (a value read before its module ran is
// undefined). Modules of one directory may name each other (a group's definition and its store's
// hooks): they are one unit. Imports of types only are left out: they are erased before the code
// runs. Prints each cycle found, as the chain of files that closes it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

// `import … from '…'`, `export … from '…'` and `import '…'`; `s` lets a statement span lines.
const STATEMENT = /^(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s+)?['"](\.[^'"]+)['"]/gms;

/** The modules `file` imports values from (relative imports only). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const [, keyword, typeOnly, names, path] of text.matchAll(STATEMENT)) {
    if (typeOnly) continue;
    // `import { type A, type B } from` imports nothing at run time.
    const braces = /^\{([^}]*)\}$/.exec(names.trim());
    if (braces && braces[1].split(',').map((n) => n.trim()).filter(Boolean).every((n) => n.startsWith('type '))) continue;
    if (keyword === 'export' && !names.includes('*') && !braces) continue;
    out.push(resolve(dirname(file), path));
  }
  return out;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => t.startsWith(SRC))]));

// Tarjan's strongly connected components: every component of more than one module holds a cycle.
let index = 0;
const order = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const components: string[][] = [];
function visit(v: string): void {
  order.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!order.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
  }
  if (low.get(v) === order.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (new Set(component.map((f) => dirname(f))).size > 1) components.push(component);
  }
}
for (const f of files) if (!order.has(f)) visit(f);

/** The shortest chain of imports from `from` to `to` inside a component. */
function chain(from: string, to: string, within: Set<string>): string[] {
  const previous = new Map<string, string>([[from, from]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift()!;
    if (v === to) break;
    for (const w of graph.get(v) ?? []) {
      if (within.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  const path = [to];
  while (path[0] !== from) path.unshift(previous.get(path[0])!);
  return path;
}

if (components.length > 0) {
  for (const component of components) {
    const name = (f: string) => relative(ROOT, f);
    // A cycle through an import from one directory to another: that import, then the way back.
    const from = component.sort().find((f) => (graph.get(f) ?? []).some((t) => component.includes(t) && dirname(t) !== dirname(f)))!;
    const to = graph.get(from)!.find((t) => component.includes(t) && dirname(t) !== dirname(from))!;
    console.error(`import cycle across directories, ${component.length} modules: ${[from, ...chain(to, from, new Set(component))].map(name).join(' -> ')}`);
  }
  process.exit(1);
}
