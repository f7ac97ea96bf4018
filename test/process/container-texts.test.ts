/**
 * The container executor tells the tools where its commands run, so the model reads it: the image,
 * the network and the shared directory, as a real engine's executor reports them.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as BashStack from "../../src/BashStack.js"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { containerText } from "../../src/tool/internal/containerTexts.js"
import { dockerUnavailable, testImage } from "../support/docker.js"
import { tempDirs } from "../support/tempDirs.js"

const dirs = tempDirs("effect-bash-container-texts")
afterAll(() => dirs.removeAll())

describe.skipIf(dockerUnavailable !== undefined)("what a container executor tells the model", () => {
  it.live("the executor reports its image, network and shared directory; the tools' texts name them", () =>
    Effect.gen(function*() {
      const workspace = dirs.fresh("ws")
      const facts = yield* Effect.map(BashExecutor, (executor) => executor.container).pipe(
        Effect.provide(DockerBashExecutor.layer({ image: testImage, cwd: workspace, network: "bridge" }))
      )
      expect(facts).toEqual({ image: testImage, network: "bridge", workspace, workspaceKind: "bind" })
      const tools = yield* Effect.provide(AgentTools, BashStack.layer({ executor: { cwd: workspace }, container: { image: testImage } }))
      const text = containerText({ image: testImage, network: "none", workspace })
      expect(tools.promptSections.at(-1)?.text).toBe(text)
      expect(tools.tools[0]!.description).toContain(text)
      expect(text).toContain("with no network")
    }), 60_000)
})
