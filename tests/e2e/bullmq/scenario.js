// BullMQ end to end against a Redis-protocol server (HotKV or redis-server):
// jobs added (single, bulk, delayed, prioritized), processed by a worker
// with concurrency, retried with backoff, failed after their attempts, and
// observed through QueueEvents (XREAD BLOCK on the events stream).  Every
// count is checked exactly; exit code 0 only if all checks pass.
//   node scenario.js PORT
'use strict';
const { Queue, Worker, QueueEvents } = require('bullmq');

const port = parseInt(process.argv[2] || '6379', 10);
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const name = 'e2e' + process.pid;
const N_OK = 100, N_FLAKY = 20, N_DOOMED = 10, N_DELAYED = 15, N_PRIO = 10, N_BULK = 20;
const DELAY_MS = 400;
const checks = [];
function check(what, ok, detail) {
  checks.push({ what, ok: !!ok, detail });
}

async function main() {
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection });
  await events.waitUntilReady();
  let completedEvents = 0, failedEvents = 0;
  events.on('completed', () => completedEvents++);
  events.on('failed', () => failedEvents++);

  const attemptsSeen = new Map();
  const worker = new Worker(name, async (job) => {
    attemptsSeen.set(job.id, (attemptsSeen.get(job.id) || 0) + 1);
    switch (job.name) {
      case 'flaky':
        if (job.attemptsMade < 2) throw new Error('flaky failure ' + job.attemptsMade);
        return 'recovered';
      case 'doomed':
        throw new Error('always fails');
      case 'delayed':
        return Date.now() - job.timestamp;
      default:
        await job.updateProgress(50);
        return job.data.i * 2;
    }
  }, { connection, concurrency: 8 });

  for (let i = 0; i < N_OK; i++) await queue.add('ok', { i });
  for (let i = 0; i < N_FLAKY; i++)
    await queue.add('flaky', { i }, { attempts: 3, backoff: { type: 'fixed', delay: 50 } });
  for (let i = 0; i < N_DOOMED; i++)
    await queue.add('doomed', { i }, { attempts: 2, backoff: { type: 'fixed', delay: 20 } });
  for (let i = 0; i < N_DELAYED; i++) await queue.add('delayed', { i }, { delay: DELAY_MS });
  for (let i = 0; i < N_PRIO; i++) await queue.add('prio', { i: 1000 + i }, { priority: 1 + i });
  await queue.addBulk(Array.from({ length: N_BULK }, (_, i) => ({ name: 'bulk', data: { i: 2000 + i } })));

  const total = N_OK + N_FLAKY + N_DOOMED + N_DELAYED + N_PRIO + N_BULK;
  const deadline = Date.now() + 60000;
  let counts;
  for (;;) {
    counts = await queue.getJobCounts('completed', 'failed', 'delayed', 'wait', 'active', 'prioritized');
    if (counts.completed + counts.failed === total) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const expectCompleted = total - N_DOOMED;
  check('completed count', counts.completed === expectCompleted, counts);
  check('failed count', counts.failed === N_DOOMED, counts);
  check('nothing left waiting/delayed/active', counts.wait === 0 && counts.delayed === 0 && counts.active === 0 && counts.prioritized === 0, counts);

  const completed = await queue.getJobs(['completed'], 0, -1);
  const failed = await queue.getJobs(['failed'], 0, -1);
  check('completed jobs listed', completed.length === expectCompleted, completed.length);
  check('failed jobs listed', failed.length === N_DOOMED, failed.length);
  let okValues = 0, flakyOk = 0, delayedOk = 0, progressOk = 0;
  for (const j of completed) {
    if (j.name === 'ok' || j.name === 'prio' || j.name === 'bulk') {
      if (j.returnvalue === j.data.i * 2) okValues++;
      if (j.progress === 50) progressOk++;
    }
    if (j.name === 'flaky' && j.returnvalue === 'recovered' && j.attemptsMade === 3 && attemptsSeen.get(j.id) === 3) flakyOk++;
    if (j.name === 'delayed' && j.returnvalue >= DELAY_MS - 5) delayedOk++;
  }
  check('return values', okValues === N_OK + N_PRIO + N_BULK, okValues);
  check('progress stored', progressOk === N_OK + N_PRIO + N_BULK, progressOk);
  check('flaky jobs retried twice then completed', flakyOk === N_FLAKY, flakyOk);
  check('delayed jobs ran after their delay', delayedOk === N_DELAYED, delayedOk);
  let doomedOk = 0;
  for (const j of failed)
    if (j.name === 'doomed' && j.attemptsMade === 2 && j.failedReason === 'always fails' && attemptsSeen.get(j.id) === 2) doomedOk++;
  check('doomed jobs failed after 2 attempts', doomedOk === N_DOOMED, doomedOk);

  // QueueEvents reads the events stream with XREAD BLOCK: wait for the tail.
  const evDeadline = Date.now() + 10000;
  while ((completedEvents < expectCompleted || failedEvents < N_DOOMED) && Date.now() < evDeadline)
    await new Promise((r) => setTimeout(r, 50));
  check('completed events', completedEvents === expectCompleted, completedEvents);
  // 'failed' is emitted when a job has used up its attempts (retries move
  // the job to delayed instead).
  check('failed events', failedEvents === N_DOOMED, failedEvents);

  await worker.close();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
  const left = checks.filter((c) => !c.ok);
  console.log(JSON.stringify({ port, total, checks }, null, 1));
  process.exit(left.length ? 1 : 0);
}

main().catch((e) => {
  console.error('scenario error:', e);
  process.exit(2);
});
