/**
 * AgentTools is typed by tool name: it knows exactly the ten tools, each with its arguments and value.
 * Type-level only, so `tsc` is where it can fail: `npm run typecheck` covers test/ (tsconfig.json), and
 * `npm test` runs it before vitest; vitest does not run this file.
 */
import { describe, expectTypeOf, it } from "vitest"
import type { AgentTools } from "../../src/services/AgentTools.js"
import type * as BashTool from "../../src/tool/BashTool.js"
import type * as TaskKillTool from "../../src/tool/TaskKillTool.js"
import type * as TaskListTool from "../../src/tool/TaskListTool.js"
import type * as TaskOutputTool from "../../src/tool/TaskOutputTool.js"

describe("AgentTools, typed by tool name", () => {
  it("knows exactly the ten tools, with their arguments and values", () => {
    expectTypeOf<AgentTools.Name>().toEqualTypeOf<
      | "bash"
      | "task_output"
      | "task_list"
      | "task_kill"
      | "terminal_open"
      | "terminal_send"
      | "terminal_read"
      | "terminal_signal"
      | "terminal_close"
      | "terminal_list"
    >()
    expectTypeOf<AgentTools.Parameters<"bash">>().toEqualTypeOf<BashTool.Parameters>()
    expectTypeOf<AgentTools.Value<"bash">>().toEqualTypeOf<BashTool.Value>()
    expectTypeOf<AgentTools.Value<"task_output">>().toEqualTypeOf<TaskOutputTool.Value>()
    expectTypeOf<AgentTools.Value<"task_list">>().toEqualTypeOf<TaskListTool.Value>()
    expectTypeOf<AgentTools.Value<"task_kill">>().toEqualTypeOf<TaskKillTool.Value>()
  })
})
