/**
 * What the model is told about where commands run: an executor that runs them in containers makes the
 * `bash` description and the prompt sections (so the MCP server's instructions) say so, with the
 * image and its network; the `$DSH_*` variables are explained wherever they are named.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { serveMcp } from "../../src/cli/mcpServer.js"
import { AgentTools } from "../../src/services/AgentTools.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import * as ScriptedBashExecutor from "../../src/testing/ScriptedBashExecutor.js"
import { managedVariables } from "../../src/tool/internal/containerTexts.js"
import { compose } from "../support/tools.js"

/** The scripted executor, reporting that its commands run in containers of `image`. */
const inContainers = (
  network: BashExecutor.ContainerFacts["network"],
  workspaceKind?: BashExecutor.ContainerFacts["workspaceKind"]
) =>
  Layer.effect(
    BashExecutor,
    Effect.map(BashExecutor, (executor) => ({
      ...executor,
      container: { image: "effect-bash-test:latest", network, workspace: "/srv/project", workspaceKind }
    }))
  ).pipe(Layer.provideMerge(ScriptedBashExecutor.layer()))

const noNetwork = "Commands of the bash tool run inside a Docker container of the image \"effect-bash-test:latest\", " +
  "not on the user's machine, with no network (only a loopback interface, so nothing can be downloaded): only the " +
  "programs that image provides are there. The directory \"/srv/project\" is the user's, shared at the same path; " +
  "a file written anywhere else stays in the container and is gone when the container is removed. The file a " +
  "truncation marker names is on the user's machine: a command sees it only under that directory."

const managed = "Every command also gets variables named `$DSH_*`, set by the agent harness (DSH), not by the user: " +
  "`$DSH_HOME` is the harness's home directory, `$DSH_SHELL` is `1` in a shell this tool started, " +
  "`$DSH_SESSION_ID` is the calling session's id, and plugins may add more (such as `$DSH_SESSION_JSONL`, " +
  "the file the session is recorded in); read them, do not set them."

const bashDescription = Effect.map(AgentTools, (tools) => tools.tools.find((tool) => tool.name === "bash")!.description)

describe("where commands run, as the model is told", () => {
  it.effect("in containers without a network: the bash description and a prompt section say so", () =>
    Effect.gen(function*() {
      const paragraphs = (yield* bashDescription).split("\n\n")
      expect(paragraphs[2]).toBe(managed)
      expect(paragraphs[3]).toBe(noNetwork)
      const tools = yield* AgentTools
      expect(tools.promptSections.map(({ name, order }) => [name, order])).toEqual([["tool:bash", 105], [
        "tool:bash:container",
        106
      ]])
      expect(tools.promptSections[1]!.text).toBe(noNetwork)
    }).pipe(Effect.provide(compose({ executor: inContainers("none") }))))

  it.effect("in containers on the engine's network: the text names that network instead", () =>
    Effect.gen(function*() {
      const bridged = noNetwork.replace(
        "no network (only a loopback interface, so nothing can be downloaded)",
        "the container engine's default network"
      )
      expect((yield* bashDescription).split("\n\n")).toContain(bridged)
      expect((yield* AgentTools).promptSections.at(-1)!.text).toBe(bridged)
    }).pipe(Effect.provide(compose({ executor: inContainers("bridge") }))))

  it.effect("with a volume workspace: the files are the session's, in the container's volume, not the user's directory", () =>
    Effect.gen(function*() {
      const inVolume = noNetwork.replace(
        "The directory \"/srv/project\" is the user's, shared at the same path; a file written anywhere else stays " +
          "in the container and is gone when the container is removed. The file a truncation marker names is on the " +
          "user's machine: a command sees it only under that directory.",
        "The directory \"/srv/project\" holds the session's files, in the container's own volume, not on the user's " +
          "machine: they last as long as the session's container, and the user sees them only through this tool. The " +
          "file a truncation marker names is on the user's machine, out of a command's reach."
      )
      expect(inVolume).not.toBe(noNetwork)
      expect((yield* bashDescription).split("\n\n")).toContain(inVolume)
      expect((yield* AgentTools).promptSections.at(-1)!.text).toBe(inVolume)
    }).pipe(Effect.provide(compose({ executor: inContainers("none", "volume") }))))

  it.effect("on the host: no container text, and the $DSH_* variables are still explained", () =>
    Effect.gen(function*() {
      const description = yield* bashDescription
      expect(description).not.toContain("container")
      expect(description.split("\n\n")).toContain(managed)
      expect((yield* AgentTools).promptSections.map((section) => section.name)).toEqual(["tool:bash"])
      expect(managedVariables).toBe(managed)
    }).pipe(Effect.provide(compose({ executor: ScriptedBashExecutor.layer() }))))

  it.scopedLive("the MCP server's instructions say where commands run", () =>
    Effect.gen(function*() {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* serveMcp(serverSide, { session: { id: "mcp", cwd: "/srv/project" }, drainTimeout: 1000 })
      const client = new Client({ name: "test", version: "0.0.0" })
      yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientSide)), () => Effect.promise(() => client.close()))
      expect(client.getInstructions()?.split("\n\n").at(-1)).toBe(noNetwork)
    }).pipe(Effect.provide(compose({ executor: inContainers("none") }))))
})
