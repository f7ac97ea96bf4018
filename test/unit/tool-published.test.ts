/**
 * What every host publishes to the model, byte for byte, for each composition (background on/off ×
 * no sandbox / sandbox with approval / sandbox without approval): the tools' names, descriptions and JSON Schema parameters, and the same parameters
 * in the Cordis harness's dialect. The fixture was written from the tools before they became typed
 * modules; any change to it must be deliberate.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { toHarnessParameters } from "../../src/cordis/deepseek/harnessParameters.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import type { BashExecutor } from "../../src/services/BashExecutor.js"
import * as FakeConfiningExecutor from "../../src/testing/FakeConfiningExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { compose, composeWithApproval } from "../support/tools.js"

const fixture: Readonly<Record<string, unknown>> = JSON.parse(
  readFileSync(new URL("../support/fixtures/published-tools.json", import.meta.url), "utf8")
)

// "sandbox" compositions have an approval service (escalation is offered); "sandbox, no approval" not.
const compositions = [
  { name: "background, no sandbox", background: true, sandbox: false, approval: false },
  { name: "no background, no sandbox", background: false, sandbox: false, approval: false },
  { name: "background, sandbox", background: true, sandbox: true, approval: true },
  { name: "no background, sandbox", background: false, sandbox: true, approval: true },
  { name: "background, sandbox, no approval", background: true, sandbox: true, approval: false },
  { name: "no background, sandbox, no approval", background: false, sandbox: true, approval: false }
] as const

const executorOf = (sandbox: boolean): Layer.Layer<BashExecutor> =>
  sandbox ? FakeConfiningExecutor.layer() : ScriptedBashExecutor.layer()

const composed = (composition: (typeof compositions)[number]) => {
  const parts = { executor: executorOf(composition.sandbox), enableRunInBackground: composition.background }
  return composition.approval ? composeWithApproval(parts) : compose(parts)
}

/** The published face of the composed tools, as JSON text (key order included). */
const published = Effect.map(AgentTools, (tools) =>
  JSON.stringify(
    tools.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      harnessParameters: toHarnessParameters(tool.parameters)
    })),
    null,
    2
  ))

describe("published tools, byte for byte", () => {
  for (const composition of compositions) {
    it.effect(composition.name, () =>
      Effect.gen(function*() {
        expect(yield* published).toBe(JSON.stringify(fixture[composition.name], null, 2))
      }).pipe(Effect.provide(composed(composition))))
  }
})
