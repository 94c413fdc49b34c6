// What the conformance suites ask of a test object: a small subset of tap's
// Test, so an author's `t` from tap passes as it is (`adapterSuite(t, …)`),
// and `coord conformance` runs the same suites on suite-run.ts (node:assert,
// which ships with Node and Deno) with nothing else installed.

/** An assertion's optional message, spelled as tap spells it (so tap's `t` is a SuiteTest). */
export type Message = [] | [message: string];

/** Options of a section: `skip` (true or why) skips it; `timeout` in ms fails it when it takes longer. */
export interface SectionOptions {
  skip?: boolean | string;
  timeout?: number;
}

/**
 * The test object the conformance suites take: tap's `t`, or coord's own runner.
 *
 * @example
 * import t from 'tap';
 * import { adapterSuite } from 'coordkit/conformance';
 * await adapterSuite(t, { name: 'mine', make: () => createMyBackend() });
 */
export interface SuiteTest {
  test(name: string, fn: (t: SuiteTest) => unknown): Promise<unknown>;
  test(name: string, options: SectionOptions, fn: (t: SuiteTest) => unknown): Promise<unknown>;
  /** `found === wanted`. */
  equal(found: unknown, wanted: unknown, ...message: Message): boolean;
  /** Deep equality, loosely (as tap's `t.same` and node:assert's `deepEqual`). */
  same(found: unknown, wanted: unknown, ...message: Message): boolean;
  ok(value: unknown, ...message: Message): boolean;
  notOk(value: unknown, ...message: Message): boolean;
  /** A string against a RegExp, or a string it contains. */
  match(found: unknown, pattern: RegExp | string, ...message: Message): boolean;
  /** `typeof found === type`. */
  type(found: unknown, type: string, ...message: Message): boolean;
  resolves(promise: Promise<unknown>, ...message: Message): Promise<unknown>;
  pass(...message: Message): boolean;
  fail(...message: Message): boolean;
}
