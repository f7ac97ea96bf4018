/**
 * Ends a vitest run with the plain `N passed, N failed, N skipped` line that CI reads.
 */
import type { Reporter, TestModule } from "vitest/node"

export class SummaryReporter implements Reporter {
  private counts = { passed: 0, failed: 0, skipped: 0, pending: 0 }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    for (const module of testModules) {
      for (const test of module.children.allTests()) this.counts[test.result().state]++
    }
  }

  // The default reporter prints its summary in onFinished too: ours must come after it.
  onFinished(): void {
    const { failed, passed, skipped } = this.counts
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
