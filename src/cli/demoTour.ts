/**
 * The tour `effect-bash demo` takes through the real stack. Each step calls a tool exactly as a model
 * would and prints the model-facing result under a one-line heading. The demo uses fixed settings (a
 * 500 ms kill grace, a 160-byte output budget) so the tour is quick and predictable.
 */
import * as Effect from "effect/Effect"
import type { ToolSession } from "../services/ToolExecution.js"
import { AgentTools } from "../services/AgentTools.js"
import { writeStdout } from "./output.js"
import { withProgress } from "./progress.js"
import { absoluteDirectory } from "./settings.js"
import { cliStack } from "./stack.js"

/**
 * The executor settings of the tour.
 */
const demoExecutorSettings = { graceMs: 500, maxOutputBytes: 160 } as const

/** Each line of a progress update, marked as live output. */
const markLines = (text: string) => text.replace(/^(?=.)/gm, "live | ")

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * Runs the tour against the composed tools, printing to stdout.
 */
export const tour = Effect.fn("Cli.demo")(function*(session: ToolSession) {
  const tools = yield* AgentTools
  let calls = 0
  // A live step prints the progress it receives, each line marked, instead of a spinner.
  const step = <N extends AgentTools.Name>(heading: string, tool: N, args: AgentTools.Parameters<N>, live = false) =>
    Effect.gen(function*() {
      calls++
      yield* writeStdout(`\n=== ${calls}. ${heading} ===\n`)
      const call = { callId: `demo-${calls}`, session }
      const result = live
        ? yield* tools.call(tool, args, { ...call, onProgress: (text) => Effect.ignore(writeStdout(markLines(text))) })
        : yield* tools.call(tool, args, call).pipe(withProgress(`${tool} running`))
      if (live) yield* writeStdout("result:\n")
      yield* writeStdout(result.text.endsWith("\n") ? result.text : `${result.text}\n`)
      return result
    })

  yield* writeStdout(
    "effect-bash demo: each result below is exactly the text a model reads from the tool.\n"
  )
  yield* step("An ok command (bash)", "bash", {
    command: "echo \"hello from effect-bash\"; echo \"bash $BASH_VERSION\"",
    description: "Greet and show the bash version"
  })
  yield* step("Live output: progress while it runs, then the result (bash, onProgress)", "bash", {
    command: "for i in 1 2 3; do echo \"step $i\"; sleep 0.3; done",
    description: "Print three steps, slowly"
  }, true)
  yield* step("A failing command: a non-zero exit is a result, not an error (bash)", "bash", {
    command: "echo \"checking the config\"; echo \"config.yml: no such file\" >&2; exit 3",
    description: "Fail on purpose with exit code three"
  })
  yield* step("A timeout: SIGTERM is ignored, SIGKILL follows after the grace (bash, timeoutMs 1000)", "bash", {
    command: "trap '' TERM; echo \"ignoring SIGTERM\"; sleep 30",
    description: "Ignore SIGTERM and outlive the timeout",
    timeoutMs: 1000
  })
  const flood = yield* step(
    `A flood, truncated to its last ${demoExecutorSettings.maxOutputBytes} bytes with its spill path (bash)`,
    "bash",
    { command: "seq 1 100000", description: "Print one hundred thousand numbers" }
  )
  const spillPath = !flood.isError && flood.value.kind === "foreground" ? flood.value.stdout.spillPath : undefined
  if (spillPath !== undefined) {
    yield* step("The spill file holds the whole stream (bash)", "bash", {
      command: `wc -l < ${shellQuote(spillPath)}; head -n 3 ${shellQuote(spillPath)}`,
      description: "Count and peek into the spill file"
    })
  }
  const started = yield* step("A background task (bash, run_in_background)", "bash", {
    command: "for i in 1 2 3; do echo \"tick $i\"; sleep 0.2; done; echo \"now idling\"; sleep 60",
    description: "Tick three times then idle for a minute",
    run_in_background: true
  })
  if (!started.isError && started.value.kind === "background") {
    const task_id = started.value.taskId
    yield* step("Read its output, waiting up to 2 s (task_output)", "task_output", {
      task_id,
      wait: true,
      timeout_ms: 2000
    })
    yield* step("List the tasks (task_list)", "task_list", {})
    yield* step("Kill it (task_kill)", "task_kill", { task_id, reason: "the demo is over" })
    yield* step("Read its end (task_output)", "task_output", { task_id, wait: true, timeout_ms: 5000 })
  }
})

/**
 * The `demo` subcommand's program: the tour in the working directory, on a stack of its own.
 */
export const demo = () =>
  Effect.flatMap(absoluteDirectory(undefined, "working directory"), (workdir) =>
    tour({ id: "demo", cwd: workdir }).pipe(
      Effect.provide(cliStack({ workdir, executor: demoExecutorSettings }, { background: true })),
      Effect.andThen(writeStdout("\nDone: the stack is closed and every process it started is gone.\n"))
    ))
