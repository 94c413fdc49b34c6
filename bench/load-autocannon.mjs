// autocannon in a process of its own, as its CLI runs, for bench/load.mjs's
// comparison with a worker process. Started ahead (node's start and the
// import are not part of a run): it says "ready", runs on "go", says "done"
// and stays (its CPU time is read from outside) until its parent disconnects.
// With WORKERS > 0, autocannon's `workers` (its --workers: worker threads).
//   fork('bench/load-autocannon.mjs', [URL, CONNECTIONS, SECONDS, WORKERS])
import autocannon from 'autocannon';

const [url, connections, seconds, workers] = process.argv.slice(2);
process.send('ready');
process.once('message', async () => {
  await autocannon({ url, connections: Number(connections), duration: Number(seconds), ...(Number(workers) > 0 ? { workers: Number(workers) } : {}) });
  process.send('done');
});
process.once('disconnect', () => process.exit(0));
