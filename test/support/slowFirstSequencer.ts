/**
 * Starts the files that take longest first, so no long file starts last and runs alone. Vitest's own
 * order (by the durations of the previous run, else by size) is kept for the rest; a run without
 * that cache would start the small ones of the files below late.
 */
import { BaseSequencer } from "vitest/node"
import type { TestSpecification } from "vitest/node"

const slowFirst = [
  "test/process/container-executor.test.ts",
  "test/process/readme-examples.test.ts",
  "test/process/cordis-seam.test.ts",
  "test/process/group-liveness.test.ts",
  "test/process/cli-run.test.ts",
  "test/process/host-death.test.ts",
  "test/process/soak-leaves-no-process-or-fd.test.ts",
  "test/unit/fuzzed-calls-always-answer.test.ts"
]

const rank = (specification: TestSpecification): number => {
  const index = slowFirst.findIndex((file) => specification.moduleId.endsWith(`/${file}`))
  return index === -1 ? slowFirst.length : index
}

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    // Array.prototype.sort is stable: unlisted files keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
