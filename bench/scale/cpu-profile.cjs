// CPU profile of this process, written when it exits (--cpu-prof is not allowed in NODE_OPTIONS).
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (err, { profile }) => {
    if (!err) writeFileSync(`${process.env.CPU_PROF_DIR}/manager-${process.pid}.cpuprofile`, JSON.stringify(profile));
  });
});
