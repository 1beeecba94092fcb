// Wakes live event streams of a tenant when this process commits a write. Streams also poll the
// store on a timer, which is what carries events written by other processes.
import { EventEmitter } from 'node:events';
import type { Scope } from './scope.ts';

export class EventHub {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  notify = (scope: Scope): void => {
    this.#emitter.emit(`${scope.orgId}:${scope.mode}`);
  };

  subscribe(scope: Scope, listener: () => void): () => void {
    const name = `${scope.orgId}:${scope.mode}`;
    this.#emitter.on(name, listener);
    return () => this.#emitter.off(name, listener);
  }
}
