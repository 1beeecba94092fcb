// Redis, for the PostgreSQL pass (rate limits, the live event hub across processes).
import { answers, logOf, type Peer } from './peer.ts';

const url = new URL(process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379');
const peer: Peer = {
  name: 'redis',
  neededBy: 'postgres',
  program: '/usr/bin/redis-server',
  install: 'apt-get install -y redis-server',
  address: url.toString(),
  ready: () => answers(url.hostname, Number(url.port || 6379), 'PING\r\n', /\+PONG/),
  get start() {
    return {
      command: '/usr/bin/redis-server',
      args: ['--bind', url.hostname, '--port', url.port || '6379', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--logfile', logOf(peer)],
    };
  },
};
export default peer;
