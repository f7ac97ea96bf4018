/**
 * The whole graph through one Layer, against real processes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as BashStack from "../../src/BashStack.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { childrenOf, commandLineOf, isReaperCommandLine } from "../support/processes.js"

describe("BashStack", () => {
  it.live("runs the bash tool with the managed environment and records the call as JSONL", () => {
    const sessions = fs.mkdtempSync(path.join(os.tmpdir(), "effect-bash-sessions-"))
    const dshHome = path.join(sessions, "home")
    return Effect.gen(function*() {
      const tools = yield* AgentTools
      expect(tools.tools.map((tool) => tool.name)).toEqual(["bash", "task_output", "task_list", "task_kill"])
      const session = { id: "s1", cwd: sessions }
      const result = yield* tools.call("bash", {
        command: "env | grep ^DSH_ | sort; pwd -P",
        description: "show the managed environment"
      }, { callId: "c1", session })
      expect(result).toMatchObject({
        isError: false,
        text: [
          `DSH_HOME=${dshHome}`,
          `DSH_SESSION_ID=s1`,
          `DSH_SESSION_JSONL=${path.join(sessions, "s1.jsonl")}`,
          "DSH_SHELL=1",
          fs.realpathSync(sessions),
          ""
        ].join("\n")
      })
      const stored = fs.readFileSync(path.join(sessions, "s1.jsonl"), "utf8").trim().split("\n").map((line) =>
        JSON.parse(line)
      )
      expect(stored).toHaveLength(1)
      expect(stored[0]).toMatchObject({ callId: "c1", toolName: "bash", isError: false, result: { kind: "foreground", exitCode: 0 } })
    }).pipe(
      Effect.provide(BashStack.layer({ dshHome, sessionJsonlDir: sessions })),
      Effect.ensuring(Effect.sync(() => fs.rmSync(sessions, { recursive: true, force: true })))
    )
  })
})

describe("executors in one app", () => {
  it.live("share one spawner, and so one host-death reaper", () => {
    const reapers = () =>
      childrenOf(process.pid).filter((pid) => isReaperCommandLine(commandLineOf(pid)))
    const before = reapers().length
    const first = Layer.map(LocalBashExecutor.layer({ directSpawn: true }), (context) =>
      Context.make(First, Context.get(context, BashExecutor)))
    return Effect.gen(function*() {
      for (const executor of [yield* First, yield* BashExecutor]) {
        expect((yield* executor.run(yield* executor.resolve({ command: "true" }))).exitCode).toBe(0)
      }
      expect(reapers().length - before).toBe(1)
    }).pipe(Effect.provide(Layer.merge(first, LocalBashExecutor.layer({ directSpawn: true }))))
  })
})

class First extends Context.Tag("test/FirstExecutor")<First, BashExecutor["Type"]>() {}
