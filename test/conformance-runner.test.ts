// The runner `coord conformance` runs the suites on (conformance/suite-run.ts):
// it counts each section's checks and subtests, records every failure as one
// line saying why, honours skip and timeout, and turns a throw into a failure.
import t from 'tap';
import { SuiteRun, type SectionOutcome } from '../conformance/suite-run.ts';

t.test('sections: passes, failures with their reason, skips, timeouts and throws', async (t) => {
  const sections: SectionOutcome[] = []; // the root's own sections, as the CLI's rows
  const root = new SuiteRun('suite', (s) => sections.push(s));
  await root.test('checks', async (s) => {
    s.equal(1, 1, 'equal');
    s.same({ a: [1, '2'] }, { a: [1, 2] }, 'same is loose, as tap and node:assert deepEqual');
    s.match('WRONGTYPE Operation', /^WRONGTYPE /, 'match');
    s.type(1, 'number', 'type');
    await s.resolves(Promise.resolve(), 'resolves');
    s.equal('1', 1, 'strict equal');
    s.ok(0, 'ok');
    await s.test('nested', async (n) => {
      n.fail('inner failure');
    });
  });
  await root.test('skipped', { skip: 'declares capabilities.expiry false' }, async (s) => {
    s.fail('never runs');
  });
  await root.test('slow', { timeout: 50 }, () => new Promise((resolve) => setTimeout(resolve, 5000).unref()));
  await root.test('throws', () => {
    throw new Error('cannot connect');
  });
  t.same(
    sections.map((s) => [s.name, s.pass, s.fail, s.skip]),
    [
      ['checks', 5, 3, 0],
      ['skipped', 0, 0, 1],
      ['slow', 0, 1, 0],
      ['throws', 0, 1, 0],
    ],
  );
  t.same(sections[0]!.failures, ["strict equal (found '1', wanted 1)", 'ok (found 0)', 'nested › inner failure']);
  t.same(sections[2]!.failures, ['threw Error: timed out after 50 ms']);
  t.same(sections[3]!.failures, ['threw Error: cannot connect']);
  t.same([root.outcome.pass, root.outcome.fail, root.outcome.skip], [0, 3, 1], 'the root counts each section once');
});
