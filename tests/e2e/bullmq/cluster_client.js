// ioredis's Cluster client under resharding and a master's failure
// (tests/integration/test_cluster.py): discovers the cluster from the seed
// nodes, then writes rounds over KEYS keys (SET ioc:<i> <round>) until the
// deadline or until it finds the file STOP_FILE, recording for each key the
// last round a write was acknowledged.  Prints {"event":"ready"} after the
// first round and, at the end, {"event":"done","acked":{...},"errors":N,
// "writes":M}.  Exits 0.
//   node cluster_client.js KEYS DEADLINE_MS STOP_FILE PORT...
'use strict';
const fs = require('fs');
const Redis = require('ioredis');

const [nkeys, deadlineMs, stopFile, ...ports] = process.argv.slice(2);
const N = parseInt(nkeys, 10);

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function main() {
  const c = new Redis.Cluster(ports.map((p) => ({ host: '127.0.0.1', port: parseInt(p, 10) })), {
    clusterRetryStrategy: () => 100,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 50,
    maxRedirections: 32,
    redisOptions: { connectTimeout: 1000, maxRetriesPerRequest: 2 },
  });
  c.on('error', () => {});
  const deadline = Date.now() + parseInt(deadlineMs, 10);
  setTimeout(() => { say({ event: 'timeout' }); process.exit(3); }, parseInt(deadlineMs, 10) + 5000).unref();
  const acked = {};
  let errors = 0, writes = 0, round = 0;
  while (Date.now() < deadline && !fs.existsSync(stopFile)) {
    round++;
    for (let i = 0; i < N; i++) {
      try {
        await c.set('ioc:' + i, String(round));
        acked['ioc:' + i] = round;
        writes++;
      } catch (e) {
        errors++;
      }
    }
    if (round === 1) say({ event: 'ready' });
  }
  say({ event: 'done', acked, errors, writes, rounds: round });
  c.disconnect();
  process.exit(0);
}

main().catch((e) => { say({ event: 'error', message: String(e) }); process.exit(2); });
