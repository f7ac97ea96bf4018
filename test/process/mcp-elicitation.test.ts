/**
 * Sandbox escalation over MCP: the server asks the client's user through elicitation when the
 * client declares that capability, and offers no escalation when it does not. The official SDK
 * client against the built server, with bubblewrap.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as http from "node:http"
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { bwrapUsable, socatUsable } from "../support/bwrap.js"
import { listenLoopback } from "../support/networkSites.js"
import { cleanEnv, cliPath } from "../support/cli.js"

const workdir = mkdtempSync(join(tmpdir(), "effect-bash-mcp-elicit-"))
afterAll(() => rmSync(workdir, { recursive: true, force: true }))

const description = "Write a file in the workspace"
const justification = "The user asked for the file to be written."

type Answer = (request: ElicitRequest, signal: AbortSignal) => Promise<ElicitResult>

/**
 * The built server under `--sandbox read-only`, and an SDK client that declares elicitation when
 * `answer` is given (answering every request with it) and records what it was asked.
 */
const connect = (options: { readonly answer?: Answer; readonly flags?: ReadonlyArray<string> } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [cliPath, "mcp", "--workdir", workdir, "--sandbox", "read-only", ...(options.flags ?? [])],
        env: cleanEnv({ EFFECT_BASH_GRACE_MS: "300" }),
        stderr: "pipe"
      })
      const client = new Client(
        { name: "mcp-elicitation-test", version: "0.0.0" },
        options.answer === undefined ? {} : { capabilities: { elicitation: {} } }
      )
      const asked: Array<ElicitRequest["params"]> = []
      const answer = options.answer
      if (answer !== undefined) {
        client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
          asked.push(request.params)
          return answer(request, extra.signal)
        })
      }
      await client.connect(transport)
      return { client, asked }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const bash = (client: Client, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name: "bash", arguments: { description, ...args } })
    const content = result.content as Array<{ type: string; text: string }>
    return { isError: result.isError === true, text: content.map((part) => part.text).join("") }
  })

const escalated = (command: string) => ({ command, sandbox_permissions: "workspace-write", justification })

const bashProperties = (client: Client) =>
  Effect.promise(async () => {
    const { tools } = await client.listTools()
    return Object.keys(tools.find((tool) => tool.name === "bash")?.inputSchema.properties ?? {})
  })

const denial = "[stderr]\nbash: line 1: %s: Read-only file system\n[sandbox: file access denied under read-only mode]\n"
const hint =
  "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]\n"

const accept: Answer = async () => ({ action: "accept", content: {} })

describe.skipIf(!bwrapUsable)("effect-bash mcp --sandbox: escalation approved through MCP elicitation", () => {
  it.live("a client whose stdin ends before its first message: the server exits 0, answering what it got", () =>
    Effect.promise(async () => {
      const run = (input: string) =>
        new Promise<{ code: number | null; stdout: string }>((resolve) => {
          const server = spawn(process.execPath, [cliPath, "mcp", "--workdir", workdir, "--sandbox", "read-only"], {
            env: cleanEnv(),
            stdio: ["pipe", "pipe", "ignore"]
          })
          let stdout = ""
          server.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
          const limit = setTimeout(() => server.kill("SIGKILL"), 15_000)
          server.on("close", (code) => {
            clearTimeout(limit)
            resolve({ code, stdout })
          })
          server.stdin.end(input)
        })
      expect(await run("")).toEqual({ code: 0, stdout: "" })
      expect(await run(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)).toEqual({ code: 0, stdout: `{"result":{},"jsonrpc":"2.0","id":1}\n` })
    }))

  it.scopedLive("a client with elicitation: escalation offered, asked with the command, where and how it runs and the justification, run once on accept", () =>
    Effect.gen(function*() {
      const { asked, client } = yield* connect({ answer: accept })
      expect(yield* bashProperties(client)).toEqual(expect.arrayContaining(["sandbox_permissions", "justification"]))
      expect(yield* bash(client, { command: "echo hi > accepted.txt" })).toEqual({
        isError: false,
        text: `${denial.replace("%s", "accepted.txt")}${hint}[exit code: 1]`
      })
      expect(asked).toEqual([])
      const command = "echo hi > accepted.txt && echo written"
      expect(yield* bash(client, escalated(command))).toEqual({ isError: false, text: "written\n" })
      expect(readFileSync(join(workdir, "accepted.txt"), "utf8")).toBe("hi\n")
      expect(asked).toEqual([{
        mode: "form",
        message: "Allow the bash tool to run this command once with the sandbox widened to \"workspace-write\"?\n\n" +
          `Command: ${command}\n` +
          `Working directory: ${realpathSync(workdir)}\n` +
          "Runs: in the foreground, stopped after 120000 ms\n" +
          `Justification (from the model): ${justification}\n\n` +
          "Accept runs it once under \"workspace-write\"; decline leaves the sandbox as it is and the command does not run.",
        requestedSchema: { type: "object", properties: {} }
      }])
      // Once: the next call is back under read-only.
      expect((yield* bash(client, { command: "echo again > accepted.txt" })).text).toContain("Read-only file system")
      expect(readFileSync(join(workdir, "accepted.txt"), "utf8")).toBe("hi\n")
    }))

  it.scopedLive("decline and cancel refuse with the exact texts, and nothing runs", () =>
    Effect.gen(function*() {
      const answers: Array<ElicitResult["action"]> = ["decline", "cancel"]
      const { asked, client } = yield* connect({ answer: async () => ({ action: answers.shift()! }) })
      expect(yield* bash(client, escalated("echo hi > declined.txt"))).toEqual({
        isError: true,
        text: "the user rejected escalating this command to \"workspace-write\""
      })
      expect(yield* bash(client, escalated("echo hi > cancelled.txt"))).toEqual({
        isError: true,
        text: "approval for escalating to \"workspace-write\" was cancelled"
      })
      expect(asked.length).toBe(2)
      expect(existsSync(join(workdir, "declined.txt"))).toBe(false)
      expect(existsSync(join(workdir, "cancelled.txt"))).toBe(false)
    }))

  it.scopedLive("an elicitation that fails is an unavailable channel; the command does not run", () =>
    Effect.gen(function*() {
      const { client } = yield* connect({
        answer: () => Promise.reject(new Error("this client cannot show forms right now"))
      })
      expect(yield* bash(client, escalated("echo hi > failed.txt"))).toEqual({
        isError: true,
        text: "sandbox escalation to \"workspace-write\" requires approval, but no approval channel is available"
      })
      expect(existsSync(join(workdir, "failed.txt"))).toBe(false)
    }))

  it.scopedLive("no answer within --approval-timeout-ms: cancelled, and the client's prompt is withdrawn", () =>
    Effect.gen(function*() {
      let withdrawn: () => void = () => undefined
      const wasWithdrawn = new Promise<void>((resolve) => (withdrawn = resolve))
      const { client } = yield* connect({
        flags: ["--approval-timeout-ms", "300"],
        answer: (_, signal) =>
          new Promise<never>((_resolve, reject) =>
            signal.addEventListener("abort", () => {
              withdrawn()
              reject(new Error("withdrawn"))
            })
          )
      })
      const started = Date.now()
      expect(yield* bash(client, escalated("echo hi > late.txt"))).toEqual({
        isError: true,
        text: "approval for escalating to \"workspace-write\" was cancelled"
      })
      expect(Date.now() - started).toBeLessThan(5000)
      yield* Effect.promise(() => wasWithdrawn).pipe(Effect.timeout(5000))
      expect(existsSync(join(workdir, "late.txt"))).toBe(false)
    }))

  it.scopedLive("a cancelled tools/call withdraws its elicitation, and the command does not run", () =>
    Effect.gen(function*() {
      let onAsked: () => void = () => undefined
      const asked = new Promise<void>((resolve) => (onAsked = resolve))
      let onWithdrawn: () => void = () => undefined
      const withdrawn = new Promise<void>((resolve) => (onWithdrawn = resolve))
      const { client } = yield* connect({
        answer: (_, signal) =>
          new Promise<never>((_resolve, reject) => {
            signal.addEventListener("abort", () => {
              onWithdrawn()
              reject(new Error("withdrawn"))
            })
            onAsked()
          })
      })
      const controller = new AbortController()
      const call = client.callTool({ name: "bash", arguments: { description, ...escalated("echo hi > aborted.txt") } }, undefined, {
        signal: controller.signal
      })
      call.catch(() => undefined)
      yield* Effect.promise(() => asked).pipe(Effect.timeout(10_000))
      controller.abort("the user moved on")
      yield* Effect.promise(() => withdrawn).pipe(Effect.timeout(5000))
      // The server keeps serving, and nothing ran.
      expect((yield* bash(client, { command: "echo still here" })).text).toBe("still here\n")
      expect(existsSync(join(workdir, "aborted.txt"))).toBe(false)
    }))

  it.scopedLive("a client without elicitation: no escalation offered, no hint, and a forced one is refused as today", () =>
    Effect.gen(function*() {
      const { client } = yield* connect()
      const properties = yield* bashProperties(client)
      expect(properties).not.toContain("sandbox_permissions")
      expect(properties).not.toContain("justification")
      expect(yield* bash(client, { command: "echo hi > plain.txt" })).toEqual({
        isError: false,
        text: `${denial.replace("%s", "plain.txt")}[exit code: 1]`
      })
      expect(yield* bash(client, escalated("echo hi > plain.txt"))).toEqual({
        isError: true,
        text: "sandbox escalation to \"workspace-write\" requires approval, but no approval service is composed"
      })
      expect(existsSync(join(workdir, "plain.txt"))).toBe(false)
    }))
})

describe.skipIf(!bwrapUsable || !socatUsable)("effect-bash mcp --sandbox --network-allow: names approved through MCP elicitation", () => {
  const server = http.createServer((request, response) => response.end(`page of ${request.headers.host}\n`))
  const listening = Effect.promise(() => listenLoopback(server))
  const flags = ["--network-allow", "example.test", "--network-host", "example.test=127.0.0.1", "--network-host", "other.test=127.0.0.1"]

  it.scopedLive("network_access is offered; the user's accept for this command lets it reach the name; a decline runs nothing", () =>
    Effect.gen(function*() {
      const port = yield* listening
      yield* Effect.addFinalizer(() => Effect.promise(() => new Promise((resolve) => server.close(resolve))))
      const answers: Array<ElicitResult> = [{ action: "accept", content: { scope: "once" } }, { action: "decline" }]
      const { asked, client } = yield* connect({ answer: async () => answers.shift()!, flags })
      expect(yield* bashProperties(client)).toEqual(expect.arrayContaining(["network_access", "justification"]))
      const command = `curl -s http://other.test:${port}/`
      const refused = yield* bash(client, { command: `${command} -o /dev/null` })
      expect(refused.text).toBe(`(no output)\n[network: refused other.test:${port} — not in the allow-list]`)
      const granted = yield* bash(client, { command, network_access: ["other.test"], justification })
      expect(granted).toEqual({ isError: false, text: `page of other.test:${port}\n` })
      expect(asked[0]).toMatchObject({
        mode: "form",
        message: expect.stringContaining("Allow the bash tool's command to reach other.test beyond the network allow-list?")
      })
      const declined = yield* bash(client, { command, network_access: ["other.test"], justification })
      expect(declined).toEqual({ isError: true, text: "the user rejected network access to other.test" })
    }))
})
