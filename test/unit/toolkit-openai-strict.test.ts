/**
 * The toolkit through the real `@effect/ai-openai` client, whose base URL points at a local stub of
 * OpenAI's Responses API: the stub refuses every tool schema that OpenAI's strict function calling
 * refuses (the provider sends each tool with `strict: true`), with OpenAI's 400, and otherwise plays a
 * scripted model: one `bash` call, then an answer. What it received is what the model would read.
 */
import { LanguageModel, Prompt } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import * as BashToolkit from "../../src/tool/BashToolkit.js"
import { compose } from "../support/tools.js"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** OpenAI's own words for the first strict-mode rule a schema breaks, or undefined when it keeps them all. */
const strictProblem = (schema: unknown, context: ReadonlyArray<string> = []): string | undefined => {
  if (!isObject(schema)) return undefined
  const where = `In context=(${context.map((part) => `'${part}'`).join(", ")})`
  if (Array.isArray(schema.anyOf)) {
    for (const [index, branch] of schema.anyOf.entries()) {
      const problem = strictProblem(branch, [...context, "anyOf", String(index)])
      if (problem !== undefined) return problem
    }
  }
  if (schema.type !== "object" && !(Array.isArray(schema.type) && schema.type.includes("object"))) {
    return schema.items === undefined ? undefined : strictProblem(schema.items, [...context, "items"])
  }
  if (schema.additionalProperties !== false) {
    return `${where}, 'additionalProperties' is required to be supplied and to be false.`
  }
  const keys = Object.keys(isObject(schema.properties) ? schema.properties : {})
  const required: ReadonlyArray<unknown> = Array.isArray(schema.required) ? schema.required : []
  const missing = keys.find((key) => !required.includes(key))
  if (!Array.isArray(schema.required) || missing !== undefined) {
    return `${where}, 'required' is required to be supplied and to be an array including every key in properties.` +
      (missing === undefined ? "" : ` Missing '${missing}'.`)
  }
  const extra = required.find((key) => typeof key !== "string" || !keys.includes(key))
  if (extra !== undefined) {
    return `${where}, 'required' must be an array that includes every key in properties. ` +
      `Extra required key '${String(extra)}' supplied.`
  }
  for (const key of keys) {
    const problem = strictProblem((schema.properties as Json)[key], [...context, "properties", key])
    if (problem !== undefined) return problem
  }
  return undefined
}

const response = (output: ReadonlyArray<Json>) => ({
  id: "resp-1",
  object: "response",
  status: "completed",
  created_at: 0,
  error: null,
  incomplete_details: null,
  instructions: null,
  model: "gpt-4o",
  output,
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: null,
  top_p: null
})

interface Stub {
  readonly url: string
  /** Every request body the stub received. */
  readonly requests: Array<Json>
}

/**
 * The stub on 127.0.0.1: refuses a request whose strict tools break a rule as OpenAI does (400,
 * `invalid_function_parameters`); otherwise calls `bash` with `args` until it is shown a tool output,
 * then answers "done".
 */
const stub = (args: Json) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: NodeHttp.Server; readonly stub: Stub }>((resume) => {
      const requests: Array<Json> = []
      const server = NodeHttp.createServer((request, reply) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json
          requests.push(body)
          const send = (status: number, payload: unknown) => {
            reply.writeHead(status, { "content-type": "application/json" })
            reply.end(JSON.stringify(payload))
          }
          const tools = Array.isArray(body.tools) ? (body.tools as ReadonlyArray<Json>) : []
          for (const [index, tool] of tools.entries()) {
            const problem = tool.strict === true ? strictProblem(tool.parameters) : undefined
            if (problem !== undefined) {
              return send(400, {
                error: {
                  message: `Invalid schema for function '${String(tool.name)}': ${problem}`,
                  type: "invalid_request_error",
                  param: `tools[${index}].parameters`,
                  code: "invalid_function_parameters"
                }
              })
            }
          }
          const input = Array.isArray(body.input) ? (body.input as ReadonlyArray<Json>) : []
          if (input.some((item) => item.type === "function_call_output")) {
            return send(200, response([{
              type: "message",
              id: "msg-1",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "done", annotations: [] }]
            }]))
          }
          return send(200, response([{
            type: "function_call",
            id: "fc-1",
            call_id: "call-1",
            name: "bash",
            arguments: JSON.stringify(args),
            status: "completed"
          }]))
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          stub: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests }
        })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        // Keep-alive connections of the client would hold close open.
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ stub }) => stub))

const openAi = (url: string) =>
  OpenAiLanguageModel.layer({ model: "gpt-4o" }).pipe(
    Layer.provide(OpenAiClient.layer({ apiUrl: url })),
    Layer.provide(FetchHttpClient.layer)
  )

/** A model turn that calls `bash`, then the turn that shows the model its result. */
const turn = (url: string) =>
  Effect.gen(function*() {
    const first = yield* LanguageModel.generateText({ prompt: "run it", toolkit: BashToolkit.BashToolkit })
    yield* LanguageModel.generateText({
      prompt: Prompt.merge(Prompt.make("run it"), Prompt.fromResponseParts(first.content)),
      toolkit: BashToolkit.BashToolkit
    })
    return first
  }).pipe(Effect.provide(openAi(url)))

/** The `function_call_output` the stub received: what the model reads of the call. */
const toolOutput = (requests: ReadonlyArray<Json>) =>
  (requests.at(-1)?.input as ReadonlyArray<Json>).find((item) => item.type === "function_call_output")?.output

const over = (toolkit: typeof BashToolkit.layer, executor = ScriptedBashExecutor.layer()) =>
  toolkit.pipe(Layer.provideMerge(compose({ executor })))
const recorded = Effect.flatMap(ScriptedBashExecutor.ScriptedBashExecutor, (executor) => executor.calls)
const nulls = { timeoutMs: null, workdir: null, run_in_background: null }
const hi = ScriptedBashExecutor.bashRunResult({ stdout: { text: "hi\nthere\n", truncated: false } })

describe("BashToolkit through @effect/ai-openai, against a stub that enforces OpenAI's strict mode", () => {
  it.live("the tools pass strict mode; null optional fields are read as absent; the model reads the JSON of the text", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* stub({ command: "echo hi", description: "Print a greeting", ...nulls })
      const first = yield* turn(url)
      // Every tool was sent in strict mode, and the stub accepted all of them.
      const tools = requests[0]!.tools as ReadonlyArray<Json>
      expect(tools.map((tool) => [tool.name, tool.strict])).toEqual([
        ["bash", true],
        ["task_output", true],
        ["task_list", true],
        ["task_kill", true]
      ])
      expect(requests).toHaveLength(2)
      expect((tools[0]!.parameters as Json).properties).toMatchObject({
        timeoutMs: { type: ["number", "null"] },
        workdir: { type: ["string", "null"] },
        run_in_background: { type: ["boolean", "null"] }
      })
      // `null` is "not given": the executor's defaults apply.
      const [call] = yield* recorded
      expect(call!.spec.timeoutMs).toBe(120_000)
      expect(call!.spec.workdir).toBe("/srv/app")
      expect(first.toolResults[0]).toMatchObject({ name: "bash", isFailure: false, result: { text: "hi\nthere\n" } })
      // The provider sends JSON.stringify of the encoded result: the text as a JSON string literal.
      expect(toolOutput(requests)).toBe("\"hi\\nthere\\n\"")
    }).pipe(
      Effect.scoped,
      Effect.provide(over(BashToolkit.layer, ScriptedBashExecutor.layer({ cwd: "/srv/app", runs: [hi] })))
    ))

  it.live("a wrong value still reads the exact message, as a ToolError object in JSON", () =>
    Effect.gen(function*() {
      const args = { command: "echo hi", description: "Print a greeting", ...nulls, timeoutMs: -5 }
      const { requests, url } = yield* stub(args)
      const first = yield* turn(url)
      expect(first.toolResults[0]).toMatchObject({ isFailure: true })
      expect(toolOutput(requests)).toBe(
        JSON.stringify({ message: "invalid timeoutMs: expected a positive number, got -5", _tag: "ToolError" })
      )
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(over(BashToolkit.layer))))

  it.live("the plain schemas (strict: false) are refused by strict mode with OpenAI's 400", () =>
    Effect.gen(function*() {
      const { url } = yield* stub({ command: "echo hi", description: "Print a greeting" })
      const refused = yield* Effect.either(turn(url))
      expect(Either.isLeft(refused) && refused.left._tag).toBe("HttpResponseError")
      expect(Either.isLeft(refused) && refused.left.message).toContain("400")
      expect(Either.isLeft(refused) && JSON.stringify(refused.left)).toContain("Missing 'timeoutMs'")
      expect(yield* recorded).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(over(BashToolkit.layerWith({ strict: false })))))
})
