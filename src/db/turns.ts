// Turns for a scarce thing (a connection, or some of a pool's): at most `size` holders at once, the
// others waiting in the order they asked.

export class Turns {
  readonly #size: number;
  #held = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Takes a turn: at once (undefined) when one is free, else a promise that resolves when it is this caller's. */
  take(): Promise<void> | undefined {
    if (this.#held < this.#size) {
      this.#held++;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Ends a turn: the next waiting holder takes it over. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held--;
  }
}
