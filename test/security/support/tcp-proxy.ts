// A TCP forwarder the test controls, put between the service and PostgreSQL or Redis: stopping it
// is the store going away (connections cut, nothing listening), starting it again on the same port
// is the store coming back, without touching the real server other runs share.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly targetHost: string;
  readonly targetPort: number;
  port = 0;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  constructor(targetPort: number, targetHost = '127.0.0.1') {
    this.targetPort = targetPort;
    this.targetHost = targetHost;
  }

  /** Listens (on the same port as before, once one was chosen) and forwards every connection. */
  async start(): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
    return this.port;
  }

  /** Stops listening and cuts every open connection. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
