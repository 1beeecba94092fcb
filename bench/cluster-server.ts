// Scenario 1x2: the service as BENCH_PROCESSES whole processes sharing one port (Node's cluster),
// each serving only (WORKERS=off), started by the runner on the cores it is given. The primary
// answers no request; it starts the workers, and stops them when it is stopped.
import cluster from 'node:cluster';

if (cluster.isPrimary) {
  const processes = Number(process.env.BENCH_PROCESSES ?? 2);
  for (let i = 0; i < processes; i++) cluster.fork({ WORKERS: 'off' });
  let stopping = false;
  cluster.on('exit', (worker, code) => {
    if (!stopping) {
      console.error(`worker ${worker.process.pid} exited with ${code}`);
      process.exit(1);
    }
  });
  process.on('SIGTERM', () => {
    stopping = true;
    const left = Object.values(cluster.workers ?? {});
    let running = left.length;
    if (running === 0) process.exit(0);
    for (const worker of left) {
      worker?.once('exit', () => {
        if (--running === 0) process.exit(0);
      });
      worker?.process.kill('SIGTERM');
    }
  });
} else {
  await import('../src/server.ts');
}
