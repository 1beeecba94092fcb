// What a list method answers: awaited, the first page as the service sent it; iterated with
// `for await`, every item of every page, following `next_cursor` (one request per page, on demand).
export class Page<P extends { data: T[]; next_cursor: string | null }, T> implements PromiseLike<P>, AsyncIterable<T> {
  readonly #fetchPage: (cursor?: string) => Promise<P>;
  #first: Promise<P> | undefined;

  constructor(fetchPage: (cursor?: string) => Promise<unknown>) {
    this.#fetchPage = fetchPage as (cursor?: string) => Promise<P>;
  }

  #firstPage(): Promise<P> {
    return (this.#first ??= this.#fetchPage());
  }

  then<A = P, B = never>(onfulfilled?: ((page: P) => A | PromiseLike<A>) | null, onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<P | B> {
    return this.#firstPage().catch(onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.#firstPage();
    for (;;) {
      yield* page.data;
      if (!page.next_cursor) return;
      page = await this.#fetchPage(page.next_cursor);
    }
  }

  /** Every item of every page, in one array (mind the size of what you list). */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
