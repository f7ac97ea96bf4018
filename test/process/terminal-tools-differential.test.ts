/**
 * The six terminal tools against the reference's, side by side on real PTYs: the published
 * `@deepseek-ai/dsh-tool-terminal@0.0.1-rc.5` over `dsh-terminal` + `dsh-terminal-bash` (composed as
 * the harness composes them, loaded from `EFFECT_BASH_DSH_TERMINAL_DIR`) and ours through the Cordis
 * plugin, each in a Cordis 4 context with the harness's `SystemPrompt` and `ToolRuntime`, every call
 * through that context's `ctx.tools.execute`: what is compared is exactly what a model is handed (the
 * text, the error flag, the value). Each scenario runs the same calls on both; the texts and values
 * must be equal after the normalizations named below, and where ours differ on purpose the test says
 * so and why.
 */
import { Context } from "@deepseek-ai/cordis"
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt"
import ToolRuntime from "@deepseek-ai/dsh-tools"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import EffectBash from "../../src/cordis-adapter.js"
import { eventually, tempDir } from "../support/cordis.js"
import { isAlive } from "../support/processes.js"
import { loadReferenceTerminals, referenceTerminalDir } from "../support/referenceTerminals.js"
import type { Outcome, ToolHarness } from "../support/referenceTerminals.js"

let dir: ReturnType<typeof tempDir>
let harnesses: Array<ToolHarness> = []

/** Ours: the plugin with terminals (and its other defaults), in a context of our own Cordis. */
const ours = async (terminals: Record<string, unknown> = {}): Promise<ToolHarness> => {
  const root = new Context()
  await root.plugin(SystemPrompt)
  await root.plugin(ToolRuntime)
  await root.plugin(EffectBash, { graceMs: 300, spillParent: dir.path, terminals: { closeGraceMs: 1_000, ...terminals } })
  let calls = 0
  const harness: ToolHarness = {
    execute: async (name, args, session) => {
      const result = await root.tools.execute({
        callId: `call-${++calls}` as never,
        name,
        arguments: args,
        signal: new AbortController().signal,
        agent: { session: { header: { id: session, cwd: dir.path } } } as never
      })
      const [block] = result.content
      return {
        isError: result.isError,
        text: block?.type === "text" ? block.text : "",
        value: result.isError ? undefined : result.value
      }
    },
    schemas: () => root.tools.schemas().filter((schema) => schema.name.startsWith("terminal_")),
    sections: async () => (await root.systemPrompt.assemble()).sections,
    dispose: async () => {
      await root.fiber.dispose()
    }
  }
  harnesses.push(harness)
  return harness
}

const reference = async (): Promise<ToolHarness> => {
  const harness = await loadReferenceTerminals(referenceTerminalDir!, dir.path)
  harnesses.push(harness)
  return harness
}

/** Both, the reference first; each starts its terminal ids at `pty-1`, so ids need no normalizing. */
const both = async (): Promise<readonly [ToolHarness, ToolHarness]> => [await reference(), await ours()]

/**
 * Normalization: process ids. The shell's pid and a foreground group's id are the kernel's, different
 * on each side; every occurrence of the ones named (in the text and the value) becomes a placeholder.
 */
const withoutIds = (outcome: Outcome, ids: Readonly<Record<string, number>>): Outcome => {
  const entries = Object.entries(ids)
  const replace = (value: unknown): unknown => {
    if (typeof value === "number") return entries.find(([, id]) => id === value)?.[0] ?? value
    if (typeof value === "string") {
      return entries.reduce((text, [placeholder, id]) => text.replaceAll(new RegExp(`\\b${id}\\b`, "g"), placeholder), value)
    }
    if (Array.isArray(value)) return value.map(replace)
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(item)]))
    }
    return value
  }
  return replace(outcome) as Outcome
}

/**
 * Normalization: the fields our values add to the reference's (documented in docs/terminals.md):
 * a send's `screen` (whether a full-screen program holds the terminal; the reference has no such
 * report) and `transcriptPath` (the whole transcript's file); a signal's `signal` (our text is
 * rendered from the value alone, the reference's from the arguments). Nothing else is dropped.
 */
const withoutOurExtras = (outcome: Outcome): Outcome => {
  if (typeof outcome.value !== "object" || outcome.value === null || Array.isArray(outcome.value)) return outcome
  const { screen: _screen, signal: _signal, transcriptPath: _transcript, ...rest } = outcome.value as Record<string, unknown>
  return { ...outcome, value: rest }
}

/** Runs `call` on both and expects the same outcome, after the normalizations; returns both. */
const same = async (
  [theirs, mine]: readonly [ToolHarness, ToolHarness],
  name: string,
  args: unknown,
  options: { readonly session?: string; readonly ids?: readonly [Record<string, number>, Record<string, number>] } = {}
): Promise<readonly [Outcome, Outcome]> => {
  const session = options.session ?? "s1"
  const expected = await theirs.execute(name, args, session)
  const actual = await mine.execute(name, args, session)
  const [theirIds, myIds] = options.ids ?? [{}, {}]
  expect({ call: name, args, ...withoutOurExtras(withoutIds(actual, myIds)) }).toEqual({
    call: name,
    args,
    ...withoutIds(expected, theirIds)
  })
  return [expected, actual]
}

const pidOf = (outcome: Outcome): number => (outcome.value as { pid: number }).pid

beforeEach(() => {
  dir = tempDir("effect-bash-terminal-diff-")
})
afterEach(async () => {
  await Promise.all(harnesses.map((harness) => harness.dispose()))
  harnesses = []
  dir.remove()
})

describe.skipIf(referenceTerminalDir === undefined)("the terminal tools beside the reference's", () => {
  it("offer the same six tools, parameters and guidance; background names our task tools", async () => {
    const [theirs, mine] = await both()
    // The one difference: a background send is a task of our `Tasks` runtime, read with
    // `task_output` and stopped with `task_kill` (the `bash` tool's background tasks, CONTRACT §2),
    // where the reference's is a job of `ctx.jobs` (`job_output`/`job_kill`).
    const asOurs = JSON.parse(
      JSON.stringify(theirs.schemas())
        .replace("returns a job id for job_output/job_kill.", "returns a task id for task_output/task_kill.")
        .replace("Return a job id immediately; collect with job_output or stop with job_kill.", "Return a task id immediately; collect with task_output or stop with task_kill.")
    )
    expect(JSON.stringify(asOurs)).not.toBe(JSON.stringify(theirs.schemas()))
    expect(mine.schemas()).toEqual(asOurs)
    const guidance = async (harness: ToolHarness) => (await harness.sections()).find((section) => section.name === "tool:pty")
    expect(await guidance(mine)).toEqual(await guidance(theirs))
    expect(await guidance(mine)).toBeDefined()
  })

  it("open, send, read, list, signal and close render the reference's texts and values", async () => {
    const pair = await both()
    const [openedTheirs, openedMine] = await pair[0].execute("terminal_open", { type: "shell", name: "main" }, "s1").then(
      async (theirs) => [theirs, await pair[1].execute("terminal_open", { type: "shell", name: "main" }, "s1")] as const
    )
    const ids = [{ "<shell pid>": pidOf(openedTheirs) }, { "<shell pid>": pidOf(openedMine) }] as const
    expect(withoutIds(openedMine, ids[1])).toEqual(withoutIds(openedTheirs, ids[0]))
    expect(openedMine.text).toBe("started terminal session pty-1 (main) [type: shell]\ndsh> ")
    await same(pair, "terminal_send", { sessionId: "pty-1", text: "echo hi" }, { ids })
    await same(pair, "terminal_send", { sessionId: "pty-1", text: "X=kept; cd /" }, { ids })
    const [, kept] = await same(pair, "terminal_send", { sessionId: "pty-1", text: "echo \"$X in $(pwd)\"" }, { ids })
    expect(kept.text).toBe("echo \"$X in $(pwd)\"\nkept in /\ndsh> \n[wait: stdin_read]\n[session: running]")
    await same(pair, "terminal_read", { sessionId: "pty-1", count: 3 }, { ids })
    await same(pair, "terminal_read", { sessionId: "pty-1", offset: 1, count: 2 }, { ids })
    // Text without Enter leaves the shell reading the rest of its line. Ours settle that as
    // `stdin_read` at once — the foreground process (the shell) sleeps reading the terminal, which is
    // the stdin-wait tier's fact (docs/terminals.md, the wait reasons) — where the reference's stdin
    // tier leaves a reading shell to its prompt marker and settles on silence, `inferred_idle`,
    // seconds later. Only the wait reason differs.
    const partial = await Promise.all(
      pair.map((harness) => harness.execute("terminal_send", { sessionId: "pty-1", text: "printf 'no newline'", submit: false }, "s1"))
    )
    expect(partial[0]!.text).toBe("printf 'no newline'\n[wait: inferred_idle]\n[session: running]")
    expect(withoutOurExtras(partial[1]!)).toEqual({
      ...partial[0]!,
      text: partial[0]!.text.replace("inferred_idle", "stdin_read"),
      value: { ...(partial[0]!.value as object), waitReason: "stdin_read" }
    })
    await same(pair, "terminal_send", { sessionId: "pty-1", text: "" }, { ids })
    const [, listed] = await same(pair, "terminal_list", {}, { ids })
    expect(listed.text).toBe(`pty-1 (main) [shell] running pid=${pidOf(openedMine)}`)
    await same(pair, "terminal_list", {}, { session: "s2", ids })
    // The shell holds the foreground: the signal goes to its own group.
    const [, signalled] = await same(pair, "terminal_signal", { sessionId: "pty-1", signal: "SIGINT" }, { ids })
    expect(signalled.value).toEqual({ delivered: true, targetPgid: pidOf(openedMine), signal: "SIGINT" })
    await same(pair, "terminal_close", { sessionId: "pty-1" }, { ids })
    expect(isAlive(pidOf(openedMine))).toBe(false)
    await same(pair, "terminal_list", {}, { ids })
  })

  it("a command interrupted by terminal_signal, and a shell that exits, read the same", async () => {
    const pair = await both()
    const opened = await Promise.all(pair.map((harness) => harness.execute("terminal_open", { type: "shell" }, "s1")))
    const shells = opened.map(pidOf)
    // The first send runs until it is signalled; its echo in the scrollback says the send is active.
    const running = pair.map((harness) =>
      harness.execute("terminal_send", { sessionId: "pty-1", text: "sh -c 'echo begun; exec sleep 600'" }, "s1")
    )
    for (const harness of pair) {
      // `begun` is printed by the command itself, which already holds the terminal's foreground.
      await eventually(async () => (await harness.execute("terminal_read", { sessionId: "pty-1" }, "s1")).text.includes("begun\n") || undefined)
    }
    const ids = [{ "<shell pid>": shells[0]! }, { "<shell pid>": shells[1]! }] as const
    await same(pair, "terminal_send", { sessionId: "pty-1", text: "echo second" }, { ids })
    const signalled = await Promise.all(
      pair.map((harness) => harness.execute("terminal_signal", { sessionId: "pty-1", signal: "SIGINT" }, "s1"))
    )
    const groups = signalled.map((outcome) => (outcome.value as { targetPgid: number }).targetPgid)
    // The command's group, not the shell's, on both sides.
    expect(groups[0]).not.toBe(shells[0])
    expect(groups[1]).not.toBe(shells[1])
    expect(withoutOurExtras(withoutIds(signalled[1]!, { "<command group>": groups[1]! }))).toEqual(
      withoutIds(signalled[0]!, { "<command group>": groups[0]! })
    )
    const [theirsInterrupted, mineInterrupted] = await Promise.all(running)
    expect(withoutOurExtras(mineInterrupted!)).toEqual(theirsInterrupted)
    // A shell that exits: its result, the refusal of a later send, its page and its line in the list.
    await same(pair, "terminal_send", { sessionId: "pty-1", text: "exit 3" }, { ids })
    const [, refused] = await same(pair, "terminal_send", { sessionId: "pty-1", text: "echo late" }, { ids })
    expect(refused).toEqual({ isError: true, text: "Error: PTY session has exited", value: undefined })
    await same(pair, "terminal_read", { sessionId: "pty-1" }, { ids })
    // A signal to a shell that exited: ours is refused as a send is, with the reference backend's own
    // text for that state; the reference's reaches its provider, which fails to find the foreground
    // group in /proc of a pid that is gone, and says only that (naming the dead pid).
    const late = await Promise.all(
      pair.map((harness) => harness.execute("terminal_signal", { sessionId: "pty-1", signal: "SIGINT" }, "s1"))
    )
    expect(withoutIds(late[0]!, ids[0])).toEqual({
      isError: true,
      text: "Error: cannot resolve foreground process group for terminal <shell pid>",
      value: undefined
    })
    expect(late[1]).toEqual({ isError: true, text: "Error: PTY session has exited", value: undefined })
    const [, listed] = await same(pair, "terminal_list", {}, { ids })
    expect(listed.text).toBe(`pty-1 [shell] exited code=3 signal=null pid=${shells[1]}`)
    await same(pair, "terminal_close", { sessionId: "pty-1" }, { ids })
  })

  it("a flood: the same pages and markers; ours name the whole transcript", async () => {
    const pair = await both()
    await Promise.all(pair.map((harness) => harness.execute("terminal_open", { type: "shell" }, "s1")))
    // Normalization: our truncation marker names the file with the terminal's whole transcript
    // (docs/terminals.md, "Bounded memory"), the reference's is the bare `[output truncated]`; the
    // path must be the value's `transcriptPath`, and is then taken out.
    const bareMarker = (outcome: Outcome): Outcome => {
      const path = (outcome.value as { transcriptPath?: string }).transcriptPath
      expect(path).toMatch(/\/pty-1-[^/]+\.log$/)
      expect(outcome.text.endsWith(`\n[output truncated; full transcript: ${path}]`)).toBe(true)
      return { ...outcome, text: outcome.text.replace(`[output truncated; full transcript: ${path}]`, "[output truncated]") }
    }
    // At the same time, in this one process: each side's handling of its flood delays the other's
    // reads of its PTY, and neither may settle before its output is all in.
    const flood = (harness: ToolHarness) => harness.execute("terminal_send", { sessionId: "pty-1", text: "seq 1 60000" }, "s1")
    const [theirs, mine] = await Promise.all([flood(pair[0]), flood(pair[1])])
    const ours = withoutOurExtras(bareMarker(mine))
    // Both keep the newest output and drop the oldest, but not the same amount: ours keep the newest
    // 256 KiB the terminal printed (`\r\n` line ends included), the reference fills its 256 KiB result
    // cap with the cleaned text. The newest lines and every marker are the same.
    const tail = (outcome: Outcome) => outcome.text.slice(-4_000)
    expect(tail(ours)).toBe(tail(theirs))
    expect(tail(ours).endsWith("59999\n60000\ndsh> \n[wait: stdin_read]\n[session: running]\n[output truncated]")).toBe(true)
    const { viewport: _theirViewport, ...theirValue } = theirs.value as Record<string, unknown>
    const { viewport: _ourViewport, ...ourValue } = ours.value as Record<string, unknown>
    expect(ourValue).toEqual(theirValue)
    expect(theirValue).toMatchObject({ truncated: true })
    for (const page of [{ count: 3 }, {}, { offset: 9_000, count: 1_000 }]) {
      const [theirPage, myPage] = await Promise.all(
        pair.map((harness) => harness.execute("terminal_read", { sessionId: "pty-1", ...page }, "s1"))
      )
      expect(withoutOurExtras(bareMarker(myPage!))).toEqual(theirPage)
    }
  })

  it("refuse with the reference's texts: another agent, unknown or closed ids, names, backends, reads, SIGKILL", async () => {
    const pair = await both()
    const opened = await Promise.all(pair.map((harness) => harness.execute("terminal_open", { type: "shell", name: "main" }, "s1")))
    const ids = [{ "<shell pid>": pidOf(opened[0]!) }, { "<shell pid>": pidOf(opened[1]!) }] as const
    const refusals: Array<readonly [string, unknown, string]> = [
      ["terminal_send", { sessionId: "pty-1", text: "echo hi" }, "s2"],
      ["terminal_read", { sessionId: "pty-1" }, "s2"],
      ["terminal_signal", { sessionId: "pty-1", signal: "SIGINT" }, "s2"],
      ["terminal_close", { sessionId: "pty-1" }, "s2"],
      ["terminal_send", { sessionId: "pty-9", text: "echo hi" }, "s1"],
      ["terminal_open", { type: "shell", name: "main" }, "s1"],
      ["terminal_open", { type: "shell", name: "" }, "s1"],
      ["terminal_open", { type: "gdb" }, "s1"],
      ["terminal_open", { type: "" }, "s1"],
      ["terminal_send", { sessionId: "", text: "echo hi" }, "s1"],
      ["terminal_read", { sessionId: "pty-1", offset: -1 }, "s1"],
      ["terminal_read", { sessionId: "pty-1", count: 0 }, "s1"],
      ["terminal_read", { sessionId: "pty-1", count: 1.5 }, "s1"],
      ["terminal_signal", { sessionId: "pty-1", signal: "SIGKILL" }, "s1"]
    ]
    for (const [name, args, session] of refusals) {
      const [, mine] = await same(pair, name, args, { session, ids })
      expect(mine.isError).toBe(true)
    }
    await same(pair, "terminal_close", { sessionId: "pty-1" }, { ids })
    // A closed terminal is gone: every tool answers as for an id never given.
    for (const [name, args] of [
      ["terminal_send", { sessionId: "pty-1", text: "echo hi" }],
      ["terminal_read", { sessionId: "pty-1" }],
      ["terminal_signal", { sessionId: "pty-1", signal: "SIGINT" }],
      ["terminal_close", { sessionId: "pty-1" }]
    ] as const) {
      const [, mine] = await same(pair, name, args)
      expect(mine).toEqual({ isError: true, text: "Error: unknown PTY session pty-1", value: undefined })
    }
  })

  it("arguments of the wrong type: ours name the field and the value, the reference's registry its schema", async () => {
    // A missing or mistyped argument never reaches the reference's tool: the harness registry's schema
    // check refuses it (`invalid arguments: …`, dsh-tools' generic text). Ours validate in the tool
    // for every host (MCP, @effect/ai, Cordis alike), with the per-field messages the `bash` tool's
    // contract pins (`invalid <field>: expected …, got <JSON>`), so they differ on purpose.
    const [theirs, mine] = await both()
    await mine.execute("terminal_open", { type: "shell" }, "s1")
    await theirs.execute("terminal_open", { type: "shell" }, "s1")
    const cases: Array<readonly [string, unknown, string, string]> = [
      ["terminal_open", {}, "missing required property \"type\"", "invalid type: expected a non-empty string, got undefined"],
      ["terminal_open", { type: 3 }, "\"type\" must be a string", "invalid type: expected a non-empty string, got 3"],
      ["terminal_open", { type: "shell", cwd: 1 }, "\"cwd\" must be a string", "invalid cwd: expected a string, got 1"],
      ["terminal_send", { sessionId: "pty-1" }, "missing required property \"text\"", "invalid text: expected a string, got undefined"],
      ["terminal_send", { sessionId: 1, text: "x" }, "\"sessionId\" must be a string", "invalid sessionId: expected a non-empty string, got 1"],
      ["terminal_send", { sessionId: "pty-1", text: "x", submit: "yes" }, "\"submit\" must be a boolean", "invalid submit: expected a boolean, got \"yes\""],
      ["terminal_read", { sessionId: "pty-1", offset: "a" }, "\"offset\" must be a number", "invalid offset: expected a number, got \"a\""],
      [
        "terminal_signal",
        { sessionId: "pty-1", signal: "SIGUSR1" },
        "\"signal\" must be one of [\"SIGINT\",\"SIGTERM\",\"SIGKILL\",\"SIGTSTP\",\"SIGHUP\"]",
        "invalid signal: expected one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP, got \"SIGUSR1\""
      ]
    ]
    for (const [name, args, registry, field] of cases) {
      expect({ name, args, ...(await theirs.execute(name, args, "s1")) }).toEqual({
        name,
        args,
        isError: true,
        text: `Error: invalid arguments: ${registry}`,
        value: undefined
      })
      expect({ name, args, ...(await mine.execute(name, args, "s1")) }).toEqual({
        name,
        args,
        isError: true,
        text: `Error: ${field}`,
        value: undefined
      })
    }
  })

  it("caps: ours refuse past the session's limit with our exact text, the reference has none", async () => {
    // Per-session and per-layer caps on open terminals are ours (issue 53, item 3; docs/terminals.md
    // "Caps"): the reference opens as many as it is asked to.
    const theirs = await reference()
    const mine = await ours({ maxPerSession: 1 })
    for (const harness of [theirs, mine]) {
      expect((await harness.execute("terminal_open", { type: "shell" }, "s1")).isError).toBe(false)
    }
    expect((await theirs.execute("terminal_open", { type: "shell" }, "s1")).text).toMatch(/^started terminal session pty-2 /)
    expect(await mine.execute("terminal_open", { type: "shell" }, "s1")).toEqual({
      isError: true,
      text:
        "Error: terminal limit reached: this session already has 1 open terminal sessions; close one with terminal_close first",
      value: undefined
    })
  })
})
