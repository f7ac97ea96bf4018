import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Ref, Scope } from "effect"
import * as BashEnvRegistryLive from "../../src/layers/BashEnvRegistryLive.js"
import { BashEnvRegistry } from "../../src/services/BashEnvRegistry.js"
import type { ToolExecution, ToolSession } from "../../src/services/ToolExecution.js"

const noAmbientEnv = ConfigProvider.fromMap(new Map())
const ambientEnv = (vars: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(vars)))

/** Runs `program` against a registry built under `provider` (the ambient environment it sees). */
const withRegistry = <A, E, R>(
  program: Effect.Effect<A, E, R>,
  options: { readonly dshHome?: string; readonly provider?: ConfigProvider.ConfigProvider } = {}
) =>
  program.pipe(
    Effect.provide(BashEnvRegistryLive.layer(options.dshHome === undefined ? {} : { dshHome: options.dshHome })),
    Effect.withConfigProvider(options.provider ?? noAmbientEnv)
  )

const call = (session?: ToolSession): ToolExecution =>
  session === undefined ? { callId: "call-1", toolName: "bash" } : { callId: "call-1", toolName: "bash", session }

const key = (name: string, description = `what ${name} means`): BashEnvRegistry.Key => ({ key: name, description })

const contributor = (
  name: string,
  keys: ReadonlyArray<BashEnvRegistry.Key>,
  values: Readonly<Record<string, unknown>> = {}
): BashEnvRegistry.Contributor => ({ name, keys, resolve: () => Effect.succeed(values) })

/** The message `register` fails with. */
const registrationFailure = (candidate: BashEnvRegistry.Contributor) =>
  Effect.gen(function*() {
    const registry = yield* BashEnvRegistry
    return yield* registry.register(candidate).pipe(Effect.flip, Effect.map((error) => error.message))
  })

describe("BashEnvRegistry registration errors", () => {
  it.scoped("rejects an empty name", () =>
    withRegistry(Effect.gen(function*() {
      expect(yield* registrationFailure(contributor("", [key("DSH_A")]))).toBe(
        "bash env contributor name must be non-empty"
      )
      expect(yield* registrationFailure(contributor("   ", [key("DSH_A")]))).toBe(
        "bash env contributor name must be non-empty"
      )
    })))

  it.scoped("rejects a second contributor with the same name", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("git", [key("DSH_GIT")]))
      expect(yield* registrationFailure(contributor("git", [key("DSH_OTHER")]))).toBe(
        "bash env contributor \"git\" is already registered"
      )
    })))

  it.scoped("rejects keys that are not DSH_ + [A-Z][A-Z0-9_]*", () =>
    withRegistry(Effect.gen(function*() {
      for (const bad of ["HOME", "DSH_", "DSH_lower", "DSH_1ST", "DSH__X", "dsh_X", "DSH_A-B", " DSH_A"]) {
        expect(yield* registrationFailure(contributor("bad", [key(bad)]))).toBe(
          `bash env contributor "bad" declared invalid key "${bad}"`
        )
      }
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("good", [key("DSH_A"), key("DSH_B2_C_")]))
    })))

  it.scoped("rejects each reserved key", () =>
    withRegistry(Effect.gen(function*() {
      for (const reserved of ["DSH_HOME", "DSH_SHELL", "DSH_SESSION_ID"]) {
        expect(yield* registrationFailure(contributor("sneaky", [key(reserved)]))).toBe(
          `bash env contributor "sneaky" cannot own reserved key "${reserved}"`
        )
      }
    })))

  it.scoped("rejects a blank description", () =>
    withRegistry(Effect.gen(function*() {
      for (const description of ["", "  \t"]) {
        expect(yield* registrationFailure(contributor("terse", [key("DSH_A", description)]))).toBe(
          "bash env contributor \"terse\" must describe \"DSH_A\""
        )
      }
    })))

  it.scoped("rejects a key another contributor owns, naming both", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("first", [key("DSH_SHARED")]))
      expect(yield* registrationFailure(contributor("second", [key("DSH_MINE"), key("DSH_SHARED")]))).toBe(
        "bash env key \"DSH_SHARED\" is already owned by contributor \"first\"; contributor \"second\" cannot also own it"
      )
      // The refused contributor left nothing behind.
      expect((yield* registry.list).map((declaration) => declaration.key)).toEqual(["DSH_SHARED"])
    })))

  it.scoped("rejects a key declared twice by one contributor", () =>
    withRegistry(Effect.gen(function*() {
      expect(yield* registrationFailure(contributor("twice", [key("DSH_A"), key("DSH_A")]))).toBe(
        "bash env key \"DSH_A\" is already owned by contributor \"twice\"; contributor \"twice\" cannot also own it"
      )
    })))

  it.scoped("checks in contract order", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("taken", [key("DSH_TAKEN")]))
      // empty name before anything about keys
      expect(yield* registrationFailure(contributor("", [key("bad", "")]))).toBe(
        "bash env contributor name must be non-empty"
      )
      // duplicate name before keys
      expect(yield* registrationFailure(contributor("taken", [key("bad", "")]))).toBe(
        "bash env contributor \"taken\" is already registered"
      )
      // invalid key before a blank description
      expect(yield* registrationFailure(contributor("x", [key("DSH_bad", "")]))).toBe(
        "bash env contributor \"x\" declared invalid key \"DSH_bad\""
      )
      // reserved before a blank description
      expect(yield* registrationFailure(contributor("x", [key("DSH_HOME", "")]))).toBe(
        "bash env contributor \"x\" cannot own reserved key \"DSH_HOME\""
      )
      // blank description before ownership
      expect(yield* registrationFailure(contributor("x", [key("DSH_TAKEN", " ")]))).toBe(
        "bash env contributor \"x\" must describe \"DSH_TAKEN\""
      )
    })))
})

describe("BashEnvRegistry registration lifetime", () => {
  it.scoped("removes a registration when its scope closes", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const plugin = yield* Scope.make()
      yield* registry.register(contributor("plugin", [key("DSH_PLUGIN")], { DSH_PLUGIN: "on" })).pipe(
        Scope.extend(plugin)
      )
      expect((yield* registry.list).map((declaration) => declaration.key)).toEqual(["DSH_PLUGIN"])
      expect((yield* registry.collect(call())).DSH_PLUGIN).toBe("on")

      yield* Scope.close(plugin, Exit.void)
      expect(yield* registry.list).toEqual([])
      expect(yield* registry.collect(call())).not.toHaveProperty("DSH_PLUGIN")
      // Both the name and the key are free again.
      yield* registry.register(contributor("plugin", [key("DSH_PLUGIN")]))
    })))

  it.scoped("a refused duplicate does not remove the original when its scope closes", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("kept", [key("DSH_KEPT")]))
      const other = yield* Scope.make()
      yield* registry.register(contributor("kept", [key("DSH_ELSE")])).pipe(Scope.extend(other), Effect.flip)
      yield* Scope.close(other, Exit.void)
      expect((yield* registry.list).map((declaration) => declaration.contributor)).toEqual(["kept"])
    })))
})

describe("BashEnvRegistry.collect", () => {
  it.scoped("returns a frozen map with sorted keys and the built-ins", () =>
    withRegistry(
      Effect.gen(function*() {
        const registry = yield* BashEnvRegistry
        yield* registry.register(contributor("zeta", [key("DSH_AAA")], { DSH_AAA: "from zeta" }))
        yield* registry.register(contributor("alpha", [key("DSH_ZZZ")], { DSH_ZZZ: "from alpha" }))
        const env = yield* registry.collect(call({ id: "session-7", cwd: "/work" }))
        expect(Object.isFrozen(env)).toBe(true)
        expect(Object.keys(env)).toEqual(["DSH_AAA", "DSH_HOME", "DSH_SESSION_ID", "DSH_SHELL", "DSH_ZZZ"])
        expect(env).toEqual({
          DSH_AAA: "from zeta",
          DSH_HOME: "/opt/dsh",
          DSH_SESSION_ID: "session-7",
          DSH_SHELL: "1",
          DSH_ZZZ: "from alpha"
        })
      }),
      { dshHome: "/opt/dsh" }
    ))

  it.scoped("omits DSH_SESSION_ID without a session and passes the execution to contributors", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const seen = yield* Ref.make<ReadonlyArray<ToolExecution>>([])
      yield* registry.register({
        name: "echo",
        keys: [key("DSH_CALL")],
        resolve: (execution) => Ref.update(seen, (all) => [...all, execution]).pipe(Effect.as({ DSH_CALL: execution.callId }))
      })
      const env = yield* registry.collect(call())
      expect(Object.keys(env)).toEqual(["DSH_CALL", "DSH_HOME", "DSH_SHELL"])
      expect(env.DSH_CALL).toBe("call-1")
      expect(yield* Ref.get(seen)).toEqual([call()])
    })))

  it.scoped("leaves out a declared key the contributor omits or returns as undefined", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(
        contributor("partial", [key("DSH_SET"), key("DSH_UNSET"), key("DSH_OMITTED")], {
          DSH_SET: "",
          DSH_UNSET: undefined
        })
      )
      const env = yield* registry.collect(call())
      expect(Object.keys(env)).toEqual(["DSH_HOME", "DSH_SET", "DSH_SHELL"])
      expect(env.DSH_SET).toBe("")
    })))

  it.scoped("fails when a contributor returns an undeclared key", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("leaky", [key("DSH_OK")], { DSH_OK: "1", DSH_EXTRA: "x" }))
      const error = yield* Effect.flip(registry.collect(call()))
      expect(error._tag).toBe("BashEnvCollectError")
      expect(error.message).toBe("bash env contributor \"leaky\" returned undeclared key \"DSH_EXTRA\"")
    })))

  it.scoped("fails when a contributor returns a non-string value", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("numeric", [key("DSH_PORT")], { DSH_PORT: 8080 }))
      const error = yield* Effect.flip(registry.collect(call()))
      expect(error.message).toBe("bash env contributor \"numeric\" returned a non-string value for \"DSH_PORT\"")
    })))

  it.scoped("reports a non-string null value too", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      yield* registry.register(contributor("nullish", [key("DSH_NULL")], { DSH_NULL: null }))
      expect((yield* Effect.flip(registry.collect(call()))).message).toBe(
        "bash env contributor \"nullish\" returned a non-string value for \"DSH_NULL\""
      )
    })))
})

describe("BashEnvRegistry.list", () => {
  it.scoped("lists every declaration sorted by key without running contributors", () =>
    withRegistry(Effect.gen(function*() {
      const registry = yield* BashEnvRegistry
      const runs = yield* Ref.make(0)
      const counting = (name: string, keys: ReadonlyArray<BashEnvRegistry.Key>): BashEnvRegistry.Contributor => ({
        name,
        keys,
        resolve: () => Ref.update(runs, (n) => n + 1).pipe(Effect.as({}))
      })
      yield* registry.register(counting("b", [key("DSH_Z", "last"), key("DSH_B", "second")]))
      yield* registry.register(counting("a", [key("DSH_A", "first")]))
      expect(yield* registry.list).toEqual([
        { key: "DSH_A", contributor: "a", description: "first" },
        { key: "DSH_B", contributor: "b", description: "second" },
        { key: "DSH_Z", contributor: "b", description: "last" }
      ])
      expect(yield* Ref.get(runs)).toBe(0)
    })))
})

describe("DSH_HOME resolution", () => {
  const homeOf = (options: Parameters<typeof withRegistry>[1]) =>
    withRegistry(
      Effect.flatMap(BashEnvRegistry, (registry) => registry.collect(call())).pipe(Effect.map((env) => env.DSH_HOME)),
      options
    )

  it.effect("uses the configured home first", () =>
    Effect.gen(function*() {
      expect(yield* homeOf({ dshHome: "/srv/dsh", provider: ambientEnv({ DSH_HOME: "/ambient" }) })).toBe("/srv/dsh")
    }))

  it.effect("falls back to a non-blank $DSH_HOME", () =>
    Effect.gen(function*() {
      expect(yield* homeOf({ provider: ambientEnv({ DSH_HOME: "/ambient/dsh" }) })).toBe("/ambient/dsh")
      expect(yield* homeOf({ dshHome: " ", provider: ambientEnv({ DSH_HOME: "/ambient/dsh" }) })).toBe("/ambient/dsh")
    }))

  it.effect("defaults to ~/.dsh when neither is set or $DSH_HOME is blank", () =>
    Effect.gen(function*() {
      const fallback = NodePath.join(NodeOs.homedir(), ".dsh")
      expect(yield* homeOf({})).toBe(fallback)
      expect(yield* homeOf({ provider: ambientEnv({ DSH_HOME: "  " }) })).toBe(fallback)
    }))

  it.effect("expands ~ and makes the home absolute", () =>
    Effect.gen(function*() {
      expect(yield* homeOf({ dshHome: "~" })).toBe(NodeOs.homedir())
      expect(yield* homeOf({ dshHome: "~/custom/dsh" })).toBe(NodePath.join(NodeOs.homedir(), "custom/dsh"))
      expect(yield* homeOf({ provider: ambientEnv({ DSH_HOME: "~/from-env" }) })).toBe(
        NodePath.join(NodeOs.homedir(), "from-env")
      )
      expect(yield* homeOf({ dshHome: "relative/dsh" })).toBe(NodePath.resolve(process.cwd(), "relative/dsh"))
      expect(yield* homeOf({ dshHome: "/a/b/../c" })).toBe("/a/c")
    }))
})
