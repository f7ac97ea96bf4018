/**
 * Keeps coverage to the unit project in the one `vitest run --coverage` that `npm test` makes: the
 * rule is that TestClock tests reach every branch of the supervision, so a real process reaching one
 * must not count. Vitest takes `coverage` from the root config for every project; the process
 * project's workers are told, before any starts, that coverage is off for them (they then collect
 * nothing, which also spares them its cost).
 */
import type { Reporter, Vitest } from "vitest/node"

export class UnitCoverageOnly implements Reporter {
  onInit(vitest: Vitest): void {
    if (!vitest.config.coverage.enabled) return
    for (const project of vitest.projects) {
      if (project.name !== "unit") project.config.coverage = { ...project.config.coverage, enabled: false }
    }
  }
}
