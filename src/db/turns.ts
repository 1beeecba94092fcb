// Turns for a scarce thing (a connection, or some of a pool's): at most `size` holders at once, the
// others waiting in the order they asked. The size may be a function, asked at every take and
// release: a smaller size lets no one new in until enough holders are done.

export class Turns {
  readonly #size: () => number;
  #held = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number | (() => number)) {
    this.#size = typeof size === 'number' ? () => size : size;
  }

  /** Takes a turn: at once (undefined) when one is free, else a promise that resolves when it is this caller's. */
  take(): Promise<void> | undefined {
    if (this.#held < this.#size()) {
      this.#held++;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Ends a turn: the next waiting holders take the turns now free. */
  release(): void {
    this.#held--;
    while (this.#waiting.length > 0 && this.#held < this.#size()) {
      this.#held++;
      this.#waiting.shift()!();
    }
  }
}
