// The runner `coord conformance` runs the suites on: a SuiteTest that counts
// its checks (node:assert's comparisons) and records each failure as one line,
// so the command can print one row per section. Not tap or node:test: tap
// would have to be a dependency of coord (and its TypeScript peer dependency
// with it), and node:test on Node 20 cannot run tests in the calling process
// without printing its own report.
import { deepEqual } from 'node:assert';
import { inspect } from 'node:util';
import type { Message, SectionOptions, SuiteTest } from './suite-test.ts';

/** One section's outcome: its checks and subtests passed, failed and skipped; each failure as `what (why)`. */
export interface SectionOutcome {
  name: string;
  pass: number;
  fail: number;
  skip: number;
  failures: string[];
}

const show = (value: unknown) => inspect(value, { depth: 4, breakLength: Number.POSITIVE_INFINITY });

export class SuiteRun implements SuiteTest {
  readonly outcome: SectionOutcome;

  /** `onSection` hears each subtest of this one as it ends. */
  constructor(name: string, private readonly onSection?: (section: SectionOutcome) => void) {
    this.outcome = { name, pass: 0, fail: 0, skip: 0, failures: [] };
  }

  test(name: string, optionsOrFn: SectionOptions | ((t: SuiteTest) => unknown), fn?: (t: SuiteTest) => unknown): Promise<unknown> {
    const options = typeof optionsOrFn === 'function' ? {} : optionsOrFn;
    const body = typeof optionsOrFn === 'function' ? optionsOrFn : fn!;
    return this.run(name, options, body);
  }

  private async run(name: string, options: SectionOptions, body: (t: SuiteTest) => unknown): Promise<SectionOutcome> {
    const child = new SuiteRun(name);
    if (options.skip) {
      child.outcome.skip += 1;
      this.outcome.skip += 1;
    } else {
      let timer: NodeJS.Timeout | undefined;
      const limit = options.timeout
        ? new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${options.timeout} ms`)), options.timeout);
          })
        : undefined;
      try {
        await (limit ? Promise.race([body(child), limit]) : body(child));
      } catch (err) {
        child.fail(`threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
      if (child.outcome.fail) {
        this.outcome.fail += 1;
        this.outcome.failures.push(...child.outcome.failures.map((f) => `${name} › ${f}`));
      } else this.outcome.pass += 1;
    }
    this.onSection?.(child.outcome);
    return child.outcome;
  }

  private check(passed: boolean, message: string, why?: () => string): boolean {
    if (passed) this.outcome.pass += 1;
    else {
      this.outcome.fail += 1;
      this.outcome.failures.push(why ? `${message} (${why()})` : message);
    }
    return passed;
  }

  equal(found: unknown, wanted: unknown, ...[message = 'should be equal']: Message): boolean {
    return this.check(Object.is(found, wanted), message, () => `found ${show(found)}, wanted ${show(wanted)}`);
  }

  same(found: unknown, wanted: unknown, ...[message = 'should be equivalent']: Message): boolean {
    let equivalent = true;
    try {
      deepEqual(found, wanted);
    } catch {
      equivalent = false;
    }
    return this.check(equivalent, message, () => `found ${show(found)}, wanted ${show(wanted)}`);
  }

  ok(value: unknown, ...[message = 'should be truthy']: Message): boolean {
    return this.check(Boolean(value), message, () => `found ${show(value)}`);
  }

  notOk(value: unknown, ...[message = 'should be falsy']: Message): boolean {
    return this.check(!value, message, () => `found ${show(value)}`);
  }

  match(found: unknown, pattern: RegExp | string, ...[message = 'should match']: Message): boolean {
    const matched = typeof found === 'string' && (typeof pattern === 'string' ? found.includes(pattern) : pattern.test(found));
    return this.check(matched, message, () => `found ${show(found)}, pattern ${show(pattern)}`);
  }

  type(found: unknown, type: string, ...[message = `type is ${type}`]: Message): boolean {
    return this.check(typeof found === type, message, () => `found ${typeof found}`);
  }

  async resolves(promise: Promise<unknown>, ...[message = 'should resolve']: Message): Promise<boolean> {
    try {
      await promise;
      return this.check(true, message);
    } catch (err) {
      return this.check(false, message, () => `rejected: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  pass(...[message = 'passed']: Message): boolean {
    return this.check(true, message);
  }

  fail(...[message = 'failed']: Message): boolean {
    return this.check(false, message);
  }
}
