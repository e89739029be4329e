import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

/**
 * Ends the run with one line per skipped group of tests, so a skip is never silent: the suite or
 * test (whose name says what it needs, e.g. "… — skipped: needs Node ≥ 22.19 and undici 8") and how
 * many tests it holds. A test skipped with `ctx.skip(note)` shows its note. Then one line per test
 * that passed only on a retry (a project's `retry` option), so that a flaky test is never silent
 * either; and the notes tests left with `annotate(message, 'notice')` — a test that ran its
 * measurement twice, or left some of its checks out on a machine too busy for them, says so there.
 */
export default class EndOfRunReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    reportSkipped(testModules);
    reportFlaky(testModules);
    reportNotices(testModules);
  }
}

/** The annotation type a test uses for what the end of the run should say of it (tests write it as a literal). */
const NOTICE = 'notice';

/** One line per notice a test left (see above), under the test's name. */
function reportNotices(testModules: ReadonlyArray<TestModule>): void {
  const lines: string[] = [];
  let count = 0;
  for (const module of testModules)
    for (const test of module.children.allTests()) {
      const notices = test.annotations().filter((a) => a.type === NOTICE);
      if (notices.length === 0) continue;
      lines.push(`  ${whereIs(module)} > ${test.fullName}`);
      for (const notice of notices) {
        count++;
        lines.push(`    ${firstLine(notice.message)}`);
      }
    }
  if (count === 0) return;
  process.stdout.write(`\n ${count} noted by the tests themselves:\n${lines.join('\n')}\n`);
}

/** The tests that failed, then passed on a retry: one line each, with how many runs it took and what the earlier runs failed with. */
function reportFlaky(testModules: ReadonlyArray<TestModule>): void {
  const lines: string[] = [];
  let flaky = 0;
  for (const module of testModules)
    for (const test of module.children.allTests('passed')) {
      const diagnostic = test.diagnostic();
      if (diagnostic?.flaky !== true) continue;
      flaky++;
      lines.push(`  ${whereIs(module)} > ${test.fullName} (passed on run ${diagnostic.retryCount + 1})`);
      // What the earlier runs failed with (vitest keeps their errors on a test that passed on a retry).
      const result = test.result();
      for (const error of (result.state === 'passed' ? result.errors : undefined) ?? []) {
        lines.push(`    failed before with: ${firstLine(error.message)}`);
        // An assertion on a value shows the value received: its first lines.
        // (`actual` is a string in Vitest's types, not always in its reports: written as it comes.)
        const actual: unknown = error.actual;
        if (actual !== undefined) {
          const text =
            typeof actual === 'string' ? actual : (JSON.stringify(actual, null, 2) ?? String(actual));
          for (const line of text.split('\n').slice(0, 8)) lines.push(`      ${line.slice(0, 200)}`);
        }
      }
    }
  if (flaky === 0) return;
  process.stdout.write(`\n ${flaky} passed only on a retry:\n${lines.join('\n')}\n`);
}

/** A test file's path from its project's root. */
function whereIs(module: TestModule): string {
  return module.moduleId.replace(`${module.project.config.root}/`, '');
}

/** The first line of an error's message, at most 400 characters. */
function firstLine(message: string | undefined): string {
  const line = (message ?? '(no message)').split('\n')[0]!;
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}

/** One line per skipped group of tests (see above). */
function reportSkipped(testModules: ReadonlyArray<TestModule>): void {
  const lines: string[] = [];
  let total = 0;
  for (const module of testModules) {
    const reported = new Set<TestSuite | TestModule | TestCase>();
    for (const test of module.children.allTests('skipped')) {
      if (test.options.mode === 'todo') continue;
      total++;
      const group = widestSkipped(test);
      if (reported.has(group)) continue;
      reported.add(group);
      const result = test.result();
      const note = result.state === 'skipped' ? result.note : undefined;
      const where = group.type === 'test' ? group.fullName : group.type === 'suite' ? group.fullName : '';
      const count = group.type === 'test' ? '' : ` (${[...group.children.allTests()].length} tests)`;
      lines.push(`  ${whereIs(module)}${where ? ` > ${where}` : ''}${count}${note ? ` — ${note}` : ''}`);
    }
  }
  if (total === 0) return;
  process.stdout.write(`\n ${total} skipped, and why:\n${lines.join('\n')}\n`);
}

/** The outermost suite (or the module) all of whose tests are skipped, or the test itself. */
function widestSkipped(test: TestCase): TestSuite | TestModule | TestCase {
  let widest: TestSuite | TestModule | TestCase = test;
  let parent: TestSuite | TestModule = test.parent;
  for (;;) {
    const tests = [...parent.children.allTests()];
    if (tests.length === 0 || tests.some((t) => t.result().state !== 'skipped')) return widest;
    widest = parent;
    if (parent.type === 'module') return widest;
    parent = parent.parent;
  }
}
