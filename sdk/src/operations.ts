// Typed methods made from the generated `paths`: a method's arguments and answer are read off the
// operation at its path and HTTP method, so the SDK never restates a shape by hand.
// Arguments, in order: one string per `{param}` of the path; then the body (writes that take one)
// or the query (reads); then the per-call options (a write's query, e.g. `?match=`, goes there).
import type { Http, HttpMethod, RequestOptions } from './http.ts';
import { Page } from './pagination.ts';
import type { paths } from './openapi.d.ts';

type Verb = 'get' | 'post' | 'put' | 'patch' | 'delete';
type PathWith<V extends Verb> = { [P in keyof paths]: paths[P][V] extends undefined ? never : P }[keyof paths];
type Op<P extends keyof paths, V extends Verb> = NonNullable<paths[P][V]>;

/** One string argument per `{param}` of the path, in order. */
type PathArgs<P extends string> = P extends `${string}{${string}}${infer Rest}` ? [string, ...PathArgs<Rest>] : [];

type Json<C> = C extends { content: { 'application/json': infer B } } ? B : never;
export type BodyOf<O> = O extends { requestBody: infer R } ? Json<R> : O extends { requestBody?: infer R } ? Json<NonNullable<R>> | undefined : never;
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The success answer: the JSON of a 200/201/202, a string for a file (CSV), nothing for a 204. */
export type ResultOf<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer B } } ? B : string) : S extends 204 ? void : never }[keyof R]
  : never;

type QueryArg<O> = [QueryOf<O>] extends [never] ? [] : Partial<QueryOf<O>> extends QueryOf<O> ? [query?: QueryOf<O>] : [query: QueryOf<O>];
type BodyArg<O> = [BodyOf<O>] extends [never] ? [] : undefined extends BodyOf<O> ? [body?: BodyOf<O>] : [body: BodyOf<O>];
type WriteOptions<O> = RequestOptions & ([QueryOf<O>] extends [never] ? unknown : { query?: QueryOf<O> });

/** A list answer (`data` and `next_cursor`) is a Page: awaitable, and async-iterable over every item. */
type Answer<R> = R extends { data: (infer T)[]; next_cursor: string | null } ? Page<R, T> : Promise<R>;

export type Read<P extends keyof paths> = (...args: [...PathArgs<P & string>, ...QueryArg<Op<P, 'get'>>, options?: RequestOptions]) => Answer<ResultOf<Op<P, 'get'>>>;
export type Write<P extends keyof paths, V extends Verb> = (...args: [...PathArgs<P & string>, ...BodyArg<Op<P, V>>, options?: WriteOptions<Op<P, V>>]) => Promise<ResultOf<Op<P, V>>>;

function fill(path: string, args: unknown[]): { path: string; rest: unknown[] } {
  let i = 0;
  const filled = path.replace(/\{[^}]+\}/g, () => {
    const value = args[i++];
    if (typeof value !== 'string' || value === '') throw new TypeError(`${path}: argument ${i} must be a non-empty string`);
    return encodeURIComponent(value);
  });
  return { path: filled, rest: args.slice(i) };
}

/** The method factories a group table is written with, bound to one client's transport. */
export function methods(http: Http) {
  const read = <P extends PathWith<'get'>>(template: P): Read<P> => ((...args: unknown[]) => {
    const { path, rest } = fill(template, args);
    const [query, options] = rest as [object | undefined, RequestOptions | undefined];
    return new Page((cursor) => http.send({ method: 'GET', path, query: cursor ? { ...query, cursor } : query, options }));
  }) as unknown as Read<P>;

  const write = <V extends Exclude<Verb, 'get'>>(verb: V, withBody: boolean) =>
    <P extends PathWith<V>>(template: P): Write<P, V> => ((...args: unknown[]) => {
      const { path, rest } = fill(template, args);
      const [body, options] = (withBody ? rest : [undefined, ...rest]) as [unknown, (RequestOptions & { query?: object }) | undefined];
      return http.send({ method: verb.toUpperCase() as HttpMethod, path, body, query: options?.query, options });
    }) as unknown as Write<P, V>;

  return {
    get: read,
    post: write('post', true),
    put: write('put', true),
    patch: write('patch', true),
    /** A POST without a body (`launch`, `cancel`, …). */
    action: write('post', false),
    delete: write('delete', false),
  };
}
