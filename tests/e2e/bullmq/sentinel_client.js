// ioredis with its `sentinels` option across a failover
// (tests/integration/test_sentinel.py): resolve the master through Sentinel,
// write io:first, then INCR io:n and SET io:last every 50 ms.  Prints one
// JSON line {"event":"ready","port":P} once the first write succeeded (the
// test then kills the master), and at the end
// {"event":"done","port":P,"okAfter":N,...}: P the port of the master it
// writes to once it reconnected, N the writes that succeeded there.  Exits
// 0 after 10 writes on a master other than the first, 1 at the deadline.
//   node sentinel_client.js NAME DEADLINE_MS SENTINEL_PORT...
'use strict';
const Redis = require('ioredis');

const [name, deadlineMs, ...ports] = process.argv.slice(2);

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const r = new Redis({
    sentinels: ports.map((p) => ({ host: '127.0.0.1', port: parseInt(p, 10) })),
    name,
    connectTimeout: 1000,
    sentinelRetryStrategy: () => 200,
    retryStrategy: () => 200,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: true,
  });
  r.on('error', () => {}); // reconnects are expected
  const deadline = Date.now() + parseInt(deadlineMs, 10);
  setTimeout(() => { // however stuck (a connect that never ends)
    say({ event: 'timeout' });
    process.exit(3);
  }, parseInt(deadlineMs, 10) + 2000).unref();
  await r.connect();
  const first = Date.now();
  await r.set('io:first', first);
  const firstPort = r.stream.remotePort;
  say({ event: 'ready', port: firstPort });
  let okAfter = 0, failed = 0, last = 0, port = firstPort, i = 0;
  while (Date.now() < deadline && okAfter < 10) {
    i++;
    try {
      await r.incr('io:n');
      await r.set('io:last', i);
      port = r.stream.remotePort;
      last = i;
      if (port !== firstPort) okAfter++;
    } catch (e) {
      failed++;
    }
    await sleep(50);
  }
  const info = await r.info('replication').catch((e) => String(e));
  say({ event: 'done', port, firstPort, okAfter, failed, last, first,
        role: /role:(\w+)/.exec(info) ? /role:(\w+)/.exec(info)[1] : info });
  r.disconnect();
  process.exit(okAfter >= 10 ? 0 : 1);
}

main().catch((e) => {
  say({ event: 'error', error: String(e && e.stack || e) });
  process.exit(2);
});
