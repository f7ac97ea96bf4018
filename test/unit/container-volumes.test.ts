/**
 * Volume workspaces on a fake engine: a box's own volume goes with the layer, a volume the user
 * named is every box's and stays; a name with a `bind` workspace, or a bad name, is refused naming
 * the field. No engine, no processes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BoxFiles } from "../../src/services/BoxFiles.js"
import * as FakeContainerEngine from "../../src/testing/FakeContainerEngine.js"

const workspace = "/work/project"

/** The executor's layer on `fake`, with `settings` over a `volume` workspace at {@link workspace}. */
const executorOn = (fake: Context.Context<FakeContainerEngine.FakeContainerEngineControl | import("../../src/services/ContainerEngine.js").ContainerEngine>, settings: Partial<DockerBashExecutor.Settings.Input>) =>
  Layer.provide(DockerBashExecutor.layerWithEngine({ image: "fake", cwd: workspace, workspace: "volume", ...settings }), Layer.succeedContext(fake))

describe("volume workspaces on a fake engine", () => {
  it.scoped("each session's box has a volume of its own, labelled as the box, removed with the layer", () =>
    Effect.gen(function*() {
      const fake = yield* Layer.build(FakeContainerEngine.layer(() => ({ onTerm: "obey" })))
      const control = Context.get(fake, FakeContainerEngine.FakeContainerEngineControl)
      yield* Effect.scoped(Effect.gen(function*() {
        const files = Context.get(yield* Layer.build(executorOn(fake, {})), BoxFiles)
        yield* files.writeFile("a", "1", { session: "one" })
        yield* files.writeFile("a", "2", { session: "two" })
        const made = yield* control.boxes
        expect(made.map((box) => box.options.volumes)).toEqual([[{ target: workspace, name: undefined }], [{ target: workspace, name: undefined }]])
        expect(yield* control.volumes).toHaveLength(2)
      }))
      expect(yield* control.volumes).toEqual([])
    }))

  it.scoped("a named volume is every box's, and outlives the boxes and the layer", () =>
    Effect.gen(function*() {
      const fake = yield* Layer.build(FakeContainerEngine.layer(() => ({ onTerm: "obey" })))
      const control = Context.get(fake, FakeContainerEngine.FakeContainerEngineControl)
      yield* Effect.scoped(Effect.gen(function*() {
        const files = Context.get(yield* Layer.build(executorOn(fake, { workspace: undefined, volume: "kept-files" })), BoxFiles)
        yield* files.writeFile("a", "1", { session: "one" })
        yield* files.writeFile("a", "2", { session: "two" })
        expect((yield* control.boxes).map((box) => box.options.volumes)).toEqual([
          [{ target: workspace, name: "kept-files" }],
          [{ target: workspace, name: "kept-files" }]
        ])
      }))
      expect((yield* control.boxes).every((box) => box.removed)).toBe(true)
      expect(yield* control.volumes).toEqual(["kept-files"])
    }))

  it.scoped("a volume name with a bind workspace, or a name the engine would refuse, fails the layer naming the field", () =>
    Effect.gen(function*() {
      const fake = yield* Layer.build(FakeContainerEngine.layer(() => ({ onTerm: "obey" })))
      const withBind = yield* Effect.flip(Layer.build(executorOn(fake, { workspace: "bind", volume: "kept" })))
      expect(withBind).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "volume" })
      expect(withBind.message).toBe(`bash-container: volume names an engine volume ("kept"), which is a "volume" workspace, not "bind"`)
      const badName = yield* Effect.flip(Layer.build(executorOn(fake, { volume: "/etc" })))
      expect(badName).toMatchObject({ _tag: "LocalBashExecutorConfigError", field: "volume" })
      expect(badName.message).toContain("must be a volume name")
    }))
})
