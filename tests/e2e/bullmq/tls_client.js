// ioredis over TLS, unchanged (tests/integration/test_tls.py): connect with
// the `tls: {ca, cert, key}` options, SET/GET, a pipeline, a 1 MB value and
// a pub/sub round trip between two TLS connections.  Prints one JSON line
// with what it saw; the test compares it.  Exit code 0 unless an error.
//   node tls_client.js PORT CA.crt CLIENT.crt CLIENT.key
'use strict';
const fs = require('fs');
const Redis = require('ioredis');

const [port, ca, cert, key] = process.argv.slice(2);

async function main() {
  const opts = {
    host: '127.0.0.1',
    port: parseInt(port, 10),
    tls: {
      ca: fs.readFileSync(ca),
      cert: fs.readFileSync(cert),
      key: fs.readFileSync(key),
      servername: 'localhost',
    },
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  };
  const r = new Redis(opts);
  const sub = new Redis(opts);
  await r.connect();
  await sub.connect();
  const out = {};
  out.set = await r.set('io:k', 'hello');
  out.get = await r.get('io:k');
  out.pipeline = await r.pipeline().set('io:n', '1').incr('io:n').get('io:n').exec();
  const big = 'b'.repeat(1 << 20);
  await r.set('io:big', big);
  out.big = (await r.get('io:big')) === big;
  const got = new Promise((resolve) => sub.on('message', (ch, msg) => resolve([ch, msg])));
  out.subscribed = await sub.subscribe('io:ch');
  out.receivers = await r.publish('io:ch', 'ping over tls');
  out.message = await got;
  out.tls = r.stream.encrypted === true && typeof r.stream.getProtocol === 'function' ? r.stream.getProtocol() : null;
  out.quit = [await sub.quit(), await r.quit()];
  console.log(JSON.stringify(out));
  // Node lingers about 2 s over the closed TLS sockets (against
  // redis-server too): exit now (stdout to a pipe is written synchronously).
  process.exit(0);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
