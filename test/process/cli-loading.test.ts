import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadedSources, ofPackage } from "../support/loadedModules.js"

// What a subcommand does not use, it does not load: the MCP server (its SDK, zod) costs every `run`
// its load time otherwise, and the demo tour every `mcp`.
describe("what each subcommand loads (the built bin)", () => {
  it.live("run loads neither the MCP SDK nor zod", () =>
    Effect.gen(function*() {
      const { outcome, sources } = yield* Effect.promise(() => loadedSources(["run", "--", "true"]))
      expect(outcome).toMatchObject({ code: 0, stdout: "(no output)\n" })
      // The list is real: what run does use is on it.
      expect(sources.filter((source) => /\bsrc\/cli\/runCommand\.(ts|js)$/.test(source))).toHaveLength(1)
      expect(ofPackage(sources, "@modelcontextprotocol/sdk")).toEqual([])
      expect(ofPackage(sources, "zod")).toEqual([])
    }))

  it.live("mcp loads the MCP SDK but not the demo tour", () =>
    Effect.gen(function*() {
      // stdin at EOF: the server starts, sees its transport closed and shuts down.
      const { outcome, sources } = yield* Effect.promise(() => loadedSources(["mcp"]))
      expect(outcome.code).toBe(0)
      expect(ofPackage(sources, "@modelcontextprotocol/sdk")).not.toEqual([])
      expect(sources.filter((source) => /\bdemoTour\.(ts|js)$/.test(source))).toEqual([])
    }))
})
