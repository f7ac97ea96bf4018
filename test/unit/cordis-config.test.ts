/**
 * The plugin's `Config`: a Standard Schema that accepts no config at all, and whose errors name the
 * field — both from the schema and as Cordis reports them when loading the plugin.
 */
import { Context as ForkContext } from "@deepseek-ai/cordis"
import * as upstream from "cordis"
import { describe, expect, it } from "vitest"
import EffectBash, { Config } from "../../src/cordis-adapter.js"
import { EffectBashConfigFields } from "../../src/cordis/deepseek/config.js"
import { ContainerNetworkSettings, ContainerSettings } from "../../src/layers/containerSettings.js"
import * as LocalBashExecutor from "../../src/layers/LocalBashExecutor.js"
import * as SandboxBashExecutor from "../../src/layers/SandboxBashExecutor.js"
import { settingOf } from "../../src/layers/settingsSchema.js"

interface Root {
  plugin(plugin: unknown, config?: unknown): PromiseLike<unknown> & { readonly dispose: () => Promise<void> }
}
const { Context: UpstreamContext } = upstream as unknown as { readonly Context: new() => Root }

const validate = (input: unknown) => Config["~standard"].validate(input)

/** The names of the fields of a settings Schema that are settings (what the CLI has flags or variables for). */
const settingNames = (fields: Readonly<Record<string, Parameters<typeof settingOf>[0]>>): Array<string> =>
  Object.entries(fields).flatMap(([key, field]) => settingOf(field)._tag === "Some" ? [key] : []).sort()

const configFields = EffectBashConfigFields.fields
/** The generic plugin's and the harness adapter's own fields, which belong to no executor. */
const pluginOwn = [
  "completionDelivery",
  "container",
  "dshHome",
  "enableRunInBackground",
  "registerTools",
  "sandbox",
  "sessionJsonlDir",
  "terminals"
]

describe("Config", () => {
  it("takes every setting of the settings Schemas, and no field of theirs that is not a setting", () => {
    const local = settingNames(LocalBashExecutor.Settings.fields)
    expect(Object.keys(configFields).filter((key) => !pluginOwn.includes(key)).sort()).toEqual(local)
    // The sandbox's own settings (its mode as `mode`), and the binary it runs.
    const sandboxOwn = settingNames(SandboxBashExecutor.Settings.fields).filter((key) => !local.includes(key))
    expect(Object.keys(configFields.sandbox.from.fields).sort()).toEqual(
      [...sandboxOwn.filter((key) => key !== "sandboxMode"), "mode", "bwrapPath"].sort()
    )
    expect(Object.keys(configFields.container.from.fields).sort()).toEqual(
      settingNames({ ...ContainerSettings.fields, ...ContainerNetworkSettings.fields })
    )
  })

  it("accepts undefined and an empty object as all defaults", () => {
    expect(validate(undefined)).toEqual({ value: {} })
    expect(validate({})).toEqual({ value: {} })
  })

  it("accepts every documented field", () => {
    const config = {
      cwd: "/tmp",
      timeoutMs: 1_000,
      maxTimeoutMs: 2_000,
      maxOutputBytes: 100,
      maxSpillBytes: 1_000,
      maxSpillTotalBytes: 10_000,
      graceMs: 50,
      keepSpillFiles: true,
      spillParent: "/tmp",
      envAllow: ["MY_TOKEN"],
      envDeny: ["^AWS_"],
      maxBackground: 2,
      maxFinishedBackground: 4,
      enableRunInBackground: false,
      dshHome: "~/.dsh",
      sessionJsonlDir: "/tmp/sessions",
      registerTools: false,
      completionDelivery: "quiet"
    }
    expect(validate(config)).toEqual({ value: config })
  })

  it("takes the container executor's settings under container, naming a bad one", () => {
    const container = {
      image: "agent:1",
      network: "bridge",
      memoryMb: 512,
      pidsLimit: 64,
      cpus: 1.5,
      user: "1000:1000",
      readOnlyRoot: true,
      dockerHost: "unix:///var/run/docker.sock",
      workspaceRoot: "/work",
      idleStopMs: 60_000
    }
    expect(validate({ container })).toEqual({ value: { container } })
    expect(validate({ container: { image: "agent:1", memoryMb: 2 } })).toEqual({
      issues: [{ path: ["container", "memoryMb"], message: "memoryMb must be an integer of at least 6 (the engine's smallest memory limit), got 2" }]
    })
    expect(validate({ container: { image: "agent:1", cpus: 0.001 } })).toEqual({
      issues: [{ path: ["container", "cpus"], message: "cpus must be a number of at least 0.01 (the engine's smallest CPU share), got 0.001" }]
    })
    expect(validate({ container: { image: "agent:1", network: "host" } })).toMatchObject({
      issues: [{ path: ["container", "network"] }]
    })
    expect(validate({ container: {} })).toMatchObject({ issues: [{ path: ["container", "image"] }] })
  })

  it("takes terminals: true or the terminals' settings, naming a bad one", () => {
    expect(validate({ terminals: true })).toEqual({ value: { terminals: true } })
    const terminals = { rows: 20, idleSilenceMs: 1_000, maxPerSession: 2, spillParent: "/tmp" }
    expect(validate({ terminals })).toEqual({ value: { terminals } })
    expect(validate({ terminals: "yes" })).toEqual({
      issues: [
        { path: ["terminals"], message: `Expected boolean, actual "yes"` },
        { path: ["terminals"], message: `Expected TerminalsLive.Settings, actual "yes"` }
      ]
    })
    expect(validate({ terminals: { rows: "many" } })).toMatchObject({
      issues: expect.arrayContaining([{ path: ["terminals", "rows"], message: `Expected number, actual "many"` }])
    })
    expect(validate({ terminals: { rowz: 1 } })).toMatchObject({
      issues: expect.arrayContaining([expect.objectContaining({ path: ["terminals", "rowz"] })])
    })
  })

  it("takes the sandbox's network allow-list, naming a bad one", () => {
    const sandbox = {
      mode: "workspace-write",
      network: { allow: ["registry.npmjs.org", "*.github.com:443"], deny: ["gist.github.com"], denyReasons: { "gist.github.com": "pastes" } },
      networkMaxConnections: 8
    }
    expect(validate({ sandbox })).toEqual({ value: { sandbox } })
    expect(validate({ sandbox: { mode: "read-only", network: { deny: ["a.test"] } } })).toMatchObject({
      issues: [{ path: ["sandbox", "network"] }]
    })
  })

  it("names the field of a bad completionDelivery", () => {
    expect(validate({ completionDelivery: "loud" })).toEqual({
      issues: [{ path: ["completionDelivery"], message: `completionDelivery must be "wakeup" or "quiet", got "loud"` }]
    })
  })

  it("names the field of a bad number", () => {
    expect(validate({ timeoutMs: -1 })).toEqual({
      issues: [{ path: ["timeoutMs"], message: "timeoutMs must be a positive finite number, got -1" }]
    })
  })

  it("names every bad field, of any type", () => {
    const result = validate({ graceMs: 0, keepSpillFiles: "yes", envDeny: [1] })
    expect("issues" in result ? result.issues?.map((issue) => issue.path) : undefined).toEqual([
      ["graceMs"],
      ["keepSpillFiles"],
      ["envDeny", 0]
    ])
  })

  it("rejects an unknown (misspelt) field by name, listing the known ones", () => {
    const result = validate({ timeoutMS: 5 })
    const issues = "issues" in result ? result.issues : undefined
    expect(issues?.map((issue) => issue.path)).toEqual([["timeoutMS"]])
    expect(issues?.[0]?.message).toMatch(/^is unexpected, expected: .*"timeoutMs"/)
  })

  it.each([
    ["upstream cordis", () => new UpstreamContext()],
    ["the harness's fork", () => new ForkContext() as unknown as Root]
  ])("makes loading fail in %s with an error naming the field", async (_host, makeRoot) => {
    const fiber = makeRoot().plugin(EffectBash, { maxOutputBytes: Number.POSITIVE_INFINITY })
    await expect(fiber).rejects.toThrow(
      "maxOutputBytes must be a positive finite number, got Infinity (at maxOutputBytes)"
    )
    await fiber.dispose()
  })
})
