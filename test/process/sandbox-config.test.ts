/**
 * Building the sandboxing executor: settings from code and from `EFFECT_BASH_*`, and `BashStack`'s
 * `sandbox` setting (bad settings, which start nothing, are checked in the unit project). Building a
 * confined executor starts the runner's real probe, so these tests run on the live clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as BashStack from "../../src/BashStack.js"
import * as ApprovalCallback from "../../src/layers/ApprovalCallback.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { envConfigProvider } from "../support/configEnv.js"

const fromEnv = (env: Record<string, string>) =>
  Layer.setConfigProvider(envConfigProvider(env))

describe("SandboxBashExecutor settings", () => {
  it.live("the default mode is read-only; EFFECT_BASH_SANDBOX overrides it", () =>
    Effect.gen(function*() {
      expect((yield* Effect.provide(BashExecutor, SandboxBashExecutor.layer())).sandboxMode).toBe("read-only")
      const configured = SandboxBashExecutor.layerConfig().pipe(Layer.provide(fromEnv({ EFFECT_BASH_SANDBOX: "workspace-write" })))
      expect((yield* Effect.provide(BashExecutor, configured)).sandboxMode).toBe("workspace-write")
    }))

  it.live("calls without a workdir start in the configured workspace root", () =>
    Effect.gen(function*() {
      const executor = yield* Effect.provide(BashExecutor, SandboxBashExecutor.layer({ workspaceRoot: "/srv/project" }))
      expect((yield* executor.resolve({ command: "ls" })).workdir).toBe("/srv/project")
    }))

  it.live("BashStack with `sandbox` and an approval channel offers sandbox_permissions; without one it does not", () =>
    Effect.gen(function*() {
      const sandbox = { sandbox: { sandboxMode: "workspace-write" } } as const
      const approving = BashStack.layer(sandbox, { approval: ApprovalCallback.layer(() => Promise.resolve("rejected")) })
      const tools = yield* Effect.provide(AgentTools, approving)
      const bash = tools.tools.find((tool) => tool.name === "bash")
      expect(JSON.stringify(bash?.parameters)).toContain("sandbox_permissions")
      const unapproved = yield* Effect.provide(AgentTools, BashStack.layer(sandbox))
      expect(JSON.stringify(unapproved.tools.find((tool) => tool.name === "bash")?.parameters)).not.toContain(
        "sandbox_permissions"
      )
      const plain = yield* Effect.provide(AgentTools, BashStack.layer())
      expect(JSON.stringify(plain.tools.find((tool) => tool.name === "bash")?.parameters)).not.toContain("sandbox_permissions")
    }))
})
