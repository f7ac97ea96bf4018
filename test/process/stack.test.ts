/**
 * The whole graph through one Layer, against real processes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as BashStack from "../../src/BashStack.js"
import { AgentTools } from "../../src/services/AgentTools.js"

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
