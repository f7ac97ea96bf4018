/**
 * The public API as a reader meets it: the one reviewed list of what each entry point exports at run
 * time, and every name an entry point exports (following its re-exports to the module that declares
 * it) carries TSDoc with `@since` and `@category`, and so does every member of a public namespace.
 */
import { readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const entries = [
  "src/index.ts",
  "src/ai.ts",
  "src/docker.ts",
  "src/testing/index.ts",
  "src/cordis-adapter.ts",
  "src/promise.ts"
]

// The public runtime API, reviewed: every name each entry point exports, and for a module namespace
// its members. A name added or dropped is a decision, taken here; internals and test-only helpers
// stay out (tests import them by their relative path).
const surface: Record<string, Record<string, ReadonlyArray<string> | null>> = {
  "src/index.ts": {
    AbortedBeforeSpawnError: null,
    AgentTools: null,
    AgentToolsLive: ["layer", "make"],
    Approval: null,
    ApprovalCallback: ["layer", "make"],
    BackgroundLimitError: null,
    BashEnvCollectError: null,
    BashEnvRegistrationError: null,
    BashEnvRegistry: null,
    BashEnvRegistryLive: ["layer", "layerConfig", "make"],
    BashExecutor: null,
    BashRequestError: null,
    BashStack: ["layer"],
    BashTool: ["Background", "Foreground", "Value", "definition", "description", "presentCall", "presentResult", "promptSection", "render"],
    CompletionNotices: null,
    InvalidWaitTimeoutError: null,
    LocalBashExecutor: ["LocalBashExecutorConfigError", "Settings", "defaults", "environment", "layer", "layerConfig", "layerWith", "make"],
    LocalBashExecutorConfigError: null,
    NodeProcessSpawner: ["layer", "layerDirectSpawn"],
    NodePtySpawner: ["available", "layer"],
    ProcessSpawner: null,
    PtySpawnError: null,
    PtySpawner: null,
    SandboxBashExecutor: ["Settings", "defaults", "environment", "layer", "layerConfig", "layerWith", "make"],
    SandboxMode: null,
    SandboxSessions: null,
    SandboxSessionsLive: ["layer", "make"],
    SandboxUnavailableError: null,
    SessionJsonlEnvContributor: ["layer", "register"],
    SessionPersistence: null,
    SessionPersistenceError: null,
    SessionPersistenceJsonl: ["layer", "layerConfig", "layerWith"],
    SpawnError: null,
    TaskAccessError: null,
    TaskKillTool: ["Value", "definition", "parameters", "render"],
    TaskListTool: ["Value", "definition", "parameters", "render"],
    TaskOutputTool: ["Value", "defaultWaitMs", "definition", "maxWaitMs", "parameters", "render"],
    Tasks: null,
    TasksLive: ["Settings", "defaults", "layer", "layerConfig", "make"],
    TasksUnavailableError: null,
    TerminalError: null,
    TerminalTools: ["Close", "List", "Open", "Read", "Send", "Signal"],
    Terminals: null,
    TerminalsLive: ["Settings", "layer", "layerLimitMessage", "make", "sessionLimitMessage"],
    ToolError: null,
    isTerminalStatus: null,
    liveOutputBufferBytes: null
  },
  "src/ai.ts": {
    BashToolkit: ["BashToolkit", "layer", "layerWith", "make", "makeWith"],
    CurrentToolSession: null
  },
  "src/docker.ts": {
    ArchiveTooLargeError: null,
    BoxFileError: null,
    BoxFileNotFoundError: null,
    BoxFileTooLargeError: null,
    BoxFiles: null,
    ContainerConflictError: null,
    ContainerEngine: null,
    ContainerEngineError: null,
    ContainerNotFoundError: null,
    DockerBashExecutor: [
      "ContainerSettings",
      "ContainerUnavailableError",
      "Settings",
      "environment",
      "layer",
      "layerConfig",
      "layerWithEngine",
      "make",
      "makeWithEngine"
    ],
    DockerContainerEngine: ["layer", "make"],
    EngineUnavailableError: null,
    boxFilesDefaultMaxBytes: null
  },
  "src/testing/index.ts": {
    ApprovalScripted: ["ApprovalScripted", "layer"],
    FakeConfiningExecutor: ["FakeConfiningExecutor", "layer"],
    FakeContainerEngine: ["FakeContainerEngineControl", "layer"],
    FakeProcessSpawner: ["FakeSpawnerControl", "layer"],
    FakePtySpawner: ["make", "promptText"],
    ScriptedBashExecutor: ["ScriptedBashExecutor", "bashRunResult", "echoResult", "layer", "untilAborted"]
  },
  "src/cordis-adapter.ts": {
    Config: null,
    CordisTerminalError: null,
    EffectBash: null,
    RunnerClosedError: null,
    SynchronousCallError: null,
    apply: null,
    default: null,
    inject: null,
    name: null
  },
  "src/promise.ts": {
    createEffectBash: null
  }
}

const parse = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)

const sourceOf = (from: string, specifier: string): string =>
  resolve(dirname(from), specifier.replace(/\.js$/, ".ts"))

const tagsOf = (node: ts.Node): Set<string> =>
  new Set(ts.getJSDocTags(node).map((tag) => tag.tagName.text))

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** The name a declaration statement declares, if it declares one. */
const declaredName = (statement: ts.Statement): string | undefined => {
  if (ts.isVariableStatement(statement)) {
    const [declaration] = statement.declarationList.declarations
    return declaration !== undefined && ts.isIdentifier(declaration.name) ? declaration.name.text : undefined
  }
  if (
    ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement) || ts.isInterfaceDeclaration(statement) ||
    ts.isTypeAliasDeclaration(statement) || ts.isModuleDeclaration(statement) || ts.isEnumDeclaration(statement)
  ) return statement.name?.getText()
  return undefined
}

/** `<file>#<name>` of every public declaration lacking `@since` or `@category`. */
const undocumented = (): Array<string> => {
  const problems = new Set<string>()
  const visited = new Set<string>()
  // Checks `names` of `file` (all of its exports when undefined), following re-exports.
  const check = (file: string, names: ReadonlySet<string> | undefined): void => {
    const key = `${file}#${names === undefined ? "*" : [...names].sort().join(",")}`
    if (visited.has(key)) return
    visited.add(key)
    const source = parse(file)
    const relative = file.slice(root.length + 1)
    const wanted = (name: string) => names === undefined || names.has(name)
    const checkNamespace = (body: ts.ModuleBlock, path: string): void => {
      for (const member of body.statements) {
        const name = declaredName(member)
        if (name === undefined || !isExported(member)) continue
        const tags = tagsOf(member)
        if (!tags.has("since") || !tags.has("category")) problems.add(`${relative}#${path}.${name}`)
      }
    }
    for (const statement of source.statements) {
      if (ts.isExportDeclaration(statement)) {
        const specifier = statement.moduleSpecifier
        if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) continue
        const target = sourceOf(file, specifier.text)
        const clause = statement.exportClause
        if (clause === undefined) check(target, names) // export * from
        else if (ts.isNamespaceExport(clause)) {
          if (wanted(clause.name.text)) check(target, undefined) // export * as X from
        } else {
          const picked = clause.elements.filter((element) => wanted(element.name.text))
          if (picked.length > 0) check(target, new Set(picked.map((e) => (e.propertyName ?? e.name).text)))
        }
        continue
      }
      if (ts.isExportAssignment(statement)) continue
      const name = declaredName(statement)
      if (name === undefined || !isExported(statement) || !wanted(name)) continue
      const tags = tagsOf(statement)
      if (!tags.has("since") || !tags.has("category")) problems.add(`${relative}#${name}`)
      if (ts.isModuleDeclaration(statement) && statement.body !== undefined && ts.isModuleBlock(statement.body)) {
        checkNamespace(statement.body, name)
      }
    }
  }
  for (const entry of entries) check(join(root, entry), undefined)
  return [...problems].sort()
}

/** What `entry` exports at run time: each name, with its members when it is a module namespace. */
const exportsOf = async (entry: string): Promise<Record<string, ReadonlyArray<string> | null>> => {
  const module: Record<string, unknown> = await import(join(root, entry))
  return Object.fromEntries(Object.keys(module).sort().map((name) => {
    const value = module[name]
    const namespace = typeof value === "object" && value !== null &&
      (value as { readonly [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === "Module"
    return [name, namespace ? Object.keys(value).sort() : null]
  }))
}

describe("the public API", () => {
  it("each entry point exports exactly the reviewed names and namespace members", async () => {
    expect(Object.keys(surface)).toEqual(entries)
    for (const entry of entries) expect(await exportsOf(entry), entry).toEqual(surface[entry])
  })

  it("every exported declaration and namespace member has @since and @category", () => {
    expect(undocumented()).toEqual([])
  })
})
