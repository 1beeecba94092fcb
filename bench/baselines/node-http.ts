// Baseline (a): node:http answering a fixed JSON body; the ceiling of any Node HTTP service here.
import { createServer } from 'node:http';
import { port, SAMPLE_REPLY } from './sample.ts';

createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(SAMPLE_REPLY) });
  res.end(SAMPLE_REPLY);
}).listen(port(), '127.0.0.1');
