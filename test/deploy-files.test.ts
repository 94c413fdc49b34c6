// The deployment examples (examples/deploy) as files: every coord config is
// valid (`coord config --check`) and valid against the JSON Schema file made
// for editors, which is what `coord config --schema` prints today; the systemd
// unit passes systemd-analyze; the Kubernetes manifests build with kustomize
// and hang together; the docker-compose file (no Docker engine here) parses
// and refers only to what exists. Bad files are one line each.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { createAjv } from '../core/ajv.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root } from './support/cli.ts';

t.before(() => buildIfStale());
const deploy = join(root, 'examples/deploy');
const env = { REDIS_URL: '', COORD_REDIS_URL: '', COORD_KEY_PREFIX: '', COORD_LOG_LEVEL: '', COORD_DEBUG: '' };
const configs = ['one-machine/coord.yaml', 'many-machines/proxy-host.yaml', 'many-machines/worker-host.yaml', 'kubernetes/coord/proxy.yaml', 'kubernetes/coord/worker.yaml'];
const tmp = mkdtempSync(join(tmpdir(), 'coord-deploy-files-'));

t.test('the schema file is what coord config --schema prints, and every example config is valid against it', async (t) => {
  const r = coordSync(['config', '--schema', '--plugin', './examples/cron'], env);
  t.equal(r.status, 0, r.stderr);
  const committed = readFileSync(join(deploy, 'coord.schema.json'), 'utf8');
  t.equal(committed, r.stdout, 'up to date (regenerate: npm run schema)');
  const schema = JSON.parse(committed);
  t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
  t.same(Object.keys(schema.properties.plugins.properties), ['browser-grid', 'webdriver', 'load-test', 'obniz', 'cron'], 'a section per plugin: the built-in ones and the one named');
  const validate = createAjv({ strict: false }).compile(schema); // draft-07 with the standard formats, as editors read it
  for (const file of configs) {
    const text = readFileSync(join(deploy, file), 'utf8');
    t.match(text, /^# yaml-language-server: \$schema=(\S+)\n/, `${file}: names the schema for editors`);
    const ref = /^# yaml-language-server: \$schema=(\S+)/.exec(text)![1]!;
    t.equal(resolve(dirname(join(deploy, file)), ref), join(deploy, 'coord.schema.json'), `${file}: the schema path resolves`);
    t.ok(validate(parse(text)), `${file}: valid for an editor: ${JSON.stringify(validate.errors)}`);
    const bad = { ...parse(text), redis: { url: 'redis://x:1', keyPrefx: '{typo}:' } };
    t.notOk(validate(bad), `${file}: a typo is flagged by the editor too`);
  }
});

t.test('coord config --check: every example config is valid, with the plugins it names loaded', async (t) => {
  for (const file of configs) {
    const r = coordSync(['config', '--check', join('examples/deploy', file)], env);
    t.equal(r.status, 0, `${file}: ${r.stderr}`);
    t.equal(r.stdout, `examples/deploy/${file}: valid\n`);
  }
});

t.test('coord config --dump --config FILE: the effective config of each process', async (t) => {
  const one = coordSync(['config', '--dump', '--config', 'examples/deploy/one-machine/coord.yaml'], { ...env, COORD_KEY_PREFIX: '{env}:' });
  t.equal(one.status, 0, one.stderr);
  const dumped = parse(one.stdout);
  t.same(Object.keys(dumped.plugins), ['browser-grid', 'cron'], 'the plugins the file names (not every built-in one)');
  t.equal(dumped.redis.keyPrefix, '{env}:', 'the environment over the file');
  t.match(dumped.plugins['browser-grid'], { port: 8080, workers: 2, maxConcurrentSessions: 5 }, 'file values and defaults');
  t.match(dumped.plugins.cron, { jobs: [{ id: 'heartbeat', every: 60 }], concurrency: 2 });
  const proxy = parse(coordSync(['config', '--dump', '--config', 'examples/deploy/many-machines/proxy-host.yaml'], env).stdout);
  t.same(proxy.roles, ['proxy', 'reaper', 'scheduler']);
});

t.test('a JSON config file may name its schema with "$schema", as editors expect', async (t) => {
  const file = join(tmp, 'deploy.json');
  writeFileSync(file, JSON.stringify({ $schema: join(deploy, 'coord.schema.json'), redis: { keyPrefix: '{json}:' }, plugins: { 'browser-grid': { port: 9000 } } }, null, 2));
  const r = coordSync(['config', '--check', file], env);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, `${file}: valid\n`);
});

t.test('bad deployment files: one line, exit 2', async (t) => {
  const oneLine = (r: ReturnType<typeof coordSync>, message: string | RegExp) => {
    t.equal(r.status, 2, `exit 2: ${r.stderr}`);
    t.equal(r.stdout, '');
    t.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    t.match(r.stderr, message);
  };
  const write = (name: string, text: string) => (writeFileSync(join(tmp, name), text), join(tmp, name));
  oneLine(coordSync(['config', '--check', write('typo.yaml', 'plugins:\n  browser-grid:\n    prot: 9000\n')], env), 'coord: config: unknown key browser-grid.prot (from typo.yaml:3): did you mean "port"?');
  oneLine(
    coordSync(['config', '--check', write('unknown.yaml', 'plugins:\n  crno: {}\n')], env),
    `coord: config file ${join(tmp, 'unknown.yaml')}: plugin "crno" is not built in (browser-grid, webdriver, load-test, obniz) nor an npm package installed in ${root}: say where it is under modules:, e.g. modules: { crno: ./plugins/crno/index.js }`,
  );
  oneLine(
    coordSync(['config', '--check', write('nomodule.yaml', 'modules:\n  cron: ./nowhere\n')], env),
    `coord: config file ${join(tmp, 'nomodule.yaml')}: modules.cron = ./nowhere (${join(tmp, 'nowhere')}): no such file`,
  );
  oneLine(
    coordSync(['config', '--check', write('misnamed.yaml', `modules:\n  crony: ${join(root, 'examples/cron')}\n`)], env),
    `coord: config file ${join(tmp, 'misnamed.yaml')}: modules.crony = ${join(root, 'examples/cron')} loads plugin "cron", not "crony": use its name under plugins: and modules:`,
  );
  oneLine(coordSync(['config', '--check', write('roles.yaml', `modules:\n  cron: ${join(root, 'examples/cron')}\nroles: [proxy]\n`)], env), /^coord: config: roles\[0\] = "proxy" \(from roles\.yaml:3\): expected one of scheduler, runner\n$/);
  oneLine(coordSync(['run', '--config', write('empty.yaml', 'log:\n  level: info\n')], env), `coord: run needs --plugin NAME, or a plugins: section in ${join(tmp, 'empty.yaml')}`);
  oneLine(coordSync(['config', '--check', write('broken.yaml', 'plugins: [\n')], env), new RegExp(`^coord: config: cannot parse ${join(tmp, 'broken.yaml')}:\\d+:\\d+: `));
});

t.test('systemd unit: systemd-analyze verify finds nothing to say', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coord-systemd-'));
  copyFileSync(join(deploy, 'systemd/coord@.service'), join(dir, 'coord@.service'));
  symlinkSync(join(dir, 'coord@.service'), join(dir, 'coord@worker-host.service'));
  const r = spawnSync('systemd-analyze', ['verify', join(dir, 'coord@worker-host.service')], { encoding: 'utf8' });
  t.equal(r.error, undefined, 'systemd-analyze is installed (Debian: systemd)');
  t.equal(r.status, 0);
  t.equal(r.stderr, '', 'no warning');
  const unit = readFileSync(join(deploy, 'systemd/coord@.service'), 'utf8');
  t.match(unit, /^ExecStart=.* run --config \/etc\/coord\/%i\.yaml \$COORD_ARGS$/m, 'one instance per config file');
  t.match(unit, /^KillSignal=SIGTERM$/m);
  t.match(unit, /^TimeoutStopSec=330$/m, 'longer than the default drainTimeout (300 s)');
});

t.test('Kubernetes: kustomize builds it; Deployments, Services and the ConfigMap agree', async (t) => {
  const r = spawnSync('kubectl', ['kustomize', join(deploy, 'kubernetes')], { encoding: 'utf8' });
  t.equal(r.error, undefined, 'kubectl is installed');
  t.equal(r.status, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS());
  t.same(docs.map((d) => `${d.kind}/${d.metadata.name}`).sort(), ['ConfigMap/coord-config-' + docs.find((d) => d.kind === 'ConfigMap').metadata.name.split('-').pop(), 'Deployment/coord-proxy', 'Deployment/coord-worker', 'Deployment/redis', 'Namespace/coord', 'Service/coord-proxy', 'Service/redis'].sort());
  const configMap = docs.find((d) => d.kind === 'ConfigMap');
  t.same(Object.keys(configMap.data).sort(), ['proxy.yaml', 'worker.yaml']);
  for (const [name, text] of Object.entries(configMap.data as Record<string, string>)) {
    t.equal(text, readFileSync(join(deploy, 'kubernetes/coord', name), 'utf8'), `${name}: the file in kubernetes/coord/, checked above`);
  }
  for (const d of docs.filter((d) => d.kind === 'Deployment')) {
    const pod = d.spec.template;
    t.same(d.spec.selector.matchLabels, { 'app.kubernetes.io/name': d.metadata.name }, `${d.metadata.name}: selector`);
    t.equal(pod.metadata.labels['app.kubernetes.io/name'], d.metadata.name, `${d.metadata.name}: pods carry the selected label`);
    for (const c of pod.spec.containers) {
      for (const m of c.volumeMounts ?? []) t.ok(pod.spec.volumes.some((v: { name: string }) => v.name === m.name), `${d.metadata.name}: volume ${m.name} is declared`);
      const args: string[] = c.args ?? [];
      const config = args.includes('--config') ? args[args.indexOf('--config') + 1] : undefined;
      if (config) {
        t.ok(config.startsWith('/etc/coord/') && configMap.data[config.slice('/etc/coord/'.length)], `${d.metadata.name}: ${config} is in the ConfigMap`);
        t.equal(pod.spec.volumes.find((v: { configMap?: { name: string } }) => v.configMap)?.configMap.name, configMap.metadata.name, 'mounted under its generated name');
      }
      for (const ref of (c.args ?? []).join(' ').match(/\$\((\w+)\)/g) ?? []) {
        t.ok(c.env.some((e: { name: string }) => `$(${e.name})` === ref), `${d.metadata.name}: ${ref} is an env var of the container`);
      }
    }
  }
  for (const s of docs.filter((d) => d.kind === 'Service')) {
    const target = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === s.spec.selector['app.kubernetes.io/name']);
    t.ok(target, `Service ${s.metadata.name} selects a Deployment`);
    for (const p of s.spec.ports) t.ok(target.spec.template.spec.containers.some((c: { ports?: { name: string }[] }) => c.ports?.some((cp) => cp.name === p.targetPort)), `Service ${s.metadata.name}: port ${p.targetPort} exists`);
  }
  const proxyPort = docs.find((d) => d.metadata.name === 'coord-proxy' && d.kind === 'Deployment').spec.template.spec.containers[0].ports[0].containerPort;
  t.equal(parse(configMap.data['proxy.yaml'])['plugins']['browser-grid'].port, proxyPort, 'the proxy listens where the container port says');
});

t.test('docker-compose.yaml parses and refers only to what exists (syntax check: no Docker engine here)', async (t) => {
  const compose = parse(readFileSync(join(deploy, 'docker-compose.yaml'), 'utf8'), { merge: true });
  t.same(Object.keys(compose.services).sort(), ['proxy', 'redis', 'worker']);
  for (const [name, s] of Object.entries(compose.services as Record<string, Record<string, any>>)) {
    t.ok(s.image || s.build, `${name}: an image or a build`);
    if (s.build) {
      t.ok(existsSync(join(deploy, s.build.context, s.build.dockerfile)), `${name}: the Dockerfile exists`);
      t.equal(resolve(deploy, s.build.context), root, `${name}: built from the repository`);
    }
    for (const dep of Object.keys(s.depends_on ?? {})) t.ok(compose.services[dep], `${name}: depends on ${dep}, which is a service`);
    for (const v of s.volumes ?? []) {
      const [from, to] = String(v).split(':');
      t.ok(existsSync(join(deploy, from!)), `${name}: ${from} exists`);
      t.ok(to!.startsWith('/app/'), `${name}: mounted into the image's /app`);
    }
    const command = [s.command ?? []].flat().join(' ');
    for (const file of command.match(/examples\/deploy\/\S+\.yaml/g) ?? []) t.ok(existsSync(join(root, file)), `${name}: ${file} exists`);
    for (const port of s.ports ?? []) t.match(String(port), /^\d+:\d+$/, `${name}: port ${port}`);
  }
  t.equal(compose.services.proxy.ports[0], '8080:8080');
  t.equal(parse(readFileSync(join(deploy, 'many-machines/proxy-host.yaml'), 'utf8')).plugins['browser-grid'].port, 8080, 'the proxy config listens on the published port');
  t.match(compose.services.worker.command[0], 'browser-grid.advertiseHost=$$(hostname -i)', '$$ is a literal $ for the container shell');
  const dockerfile = readFileSync(join(deploy, 'docker/Dockerfile'), 'utf8');
  for (const path of dockerfile.match(/^COPY (?!--from)(\S+)/gm)!.map((l) => l.slice(5))) t.ok(existsSync(join(root, path)), `Dockerfile: COPY ${path} exists`);
});

t.test('Deno reads a deployment file the same way (its modules loaded from the file\'s folder)', async (t) => {
  const r = spawnSync(join(root, 'node_modules/deno/deno'), ['run', '-A', 'cli/main.ts', 'config', '--dump', '--config', 'examples/deploy/many-machines/worker-host.yaml'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ...env, NO_COLOR: '1' },
  });
  t.equal(r.status, 0, r.stderr);
  const dumped = parse(r.stdout);
  t.same(Object.keys(dumped.plugins), ['browser-grid', 'cron']);
  t.same(dumped.roles, ['worker', 'runner']);
  t.equal(dumped.plugins.cron.concurrency, 4);
});
