/**
 * The documentation's TypeScript examples as a consumer project: every fenced ```ts block of
 * README.md and docs/*.md becomes a file that is type-checked strictly (NodeNext, the package's own
 * declarations checked as `skipLibCheck: false` checks them) against the package as a consumer
 * imports it (`effect-bash`, `effect-bash/ai`, `effect-bash/testing`, `effect-bash/cordis`), then
 * run: the blocks that use `@effect/vitest` under one vitest run, the others under node,
 * concurrently. The calls with an object literal that the prose shows in inline code
 * (`BashStack.layer({ … })`) are type-checked too, after the code of the block above them. A `console.log(...)` line ending in a comment holding a JSON string (`// "hi\n"`)
 * must print that string.
 *
 * Before that, the documents themselves are checked: every relative link or image resolves to a file
 * the package ships (package.json "files"), every `#anchor` to a heading, and the test-kit install
 * commands pin the vitest lines this repository tests with.
 *
 * In this repository the project lives under `.scratch/` and reaches the package through its
 * self-reference (so, `dist/`); the pack check (`scripts/pack-check.mjs`) uses it in an app that
 * installed the packed tarball, and checks every package's declarations there, as a consumer with
 * `skipLibCheck: false` would.
 *
 *   node scripts/readme-examples.mjs [--dir DIR] [--skip REGEX]
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, posix, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/**
 * The documents whose examples and links are checked, relative to the package root.
 *
 * @param {string} packageRoot
 * @returns {Array<string>}
 */
export const documents = (packageRoot = root) => [
  "README.md",
  ...(existsSync(join(packageRoot, "docs")) ?
    readdirSync(join(packageRoot, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`) :
    [])
]

/**
 * The fenced code blocks of a Markdown text whose language is TypeScript or JavaScript.
 *
 * @param {string} markdown
 * @returns {Array<{ lang: string, line: number, code: string }>}
 */
export const codeBlocks = (markdown) => {
  const blocks = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i])
    if (open === null) continue
    const start = i
    const body = []
    for (i++; i < lines.length && !lines[i].startsWith("```"); i++) body.push(lines[i])
    if (/^(ts|typescript|js|javascript|mjs|tsx|jsx)$/.test(open[1])) {
      blocks.push({ lang: open[1], line: start + 1, code: body.join("\n") + "\n" })
    }
  }
  return blocks
}

/** The lines of a Markdown text outside fenced code blocks (inline code spans blanked unless `keepCode`). */
const proseLines = (markdown, keepCode = false) => {
  const lines = []
  let fenced = false
  markdown.split("\n").forEach((text, index) => {
    if (text.startsWith("```")) fenced = !fenced
    else if (!fenced) lines.push({ line: index + 1, text: keepCode ? text : text.replace(/`[^`]*`/g, "``") })
  })
  return lines
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading) =>
  heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

const anchors = (markdown) =>
  new Set(proseLines(markdown, true).flatMap(({ text }) => {
    const heading = /^#{1,6}\s+(.*)$/.exec(text)
    return heading === null ? [] : [slug(heading[1])]
  }))

/** The entry points whose exports the prose's calls may name (the Cordis one needs a Cordis host). */
const proseEntries = ["effect-bash", "effect-bash/docker", "effect-bash/testing"]

/**
 * The calls with an object literal the prose shows in inline code (`BashStack.layer({ sandbox: { … } })`):
 * examples too, which a reader copies. Each is type-checked (not run: a call alone does nothing) after
 * the code of the document's last ```ts block above it, whose names it may use; an ellipsis stands for
 * nothing, so a call that needs more to check is written out.
 *
 * @param {string} markdown
 * @returns {Array<{ line: number, code: string }>}
 */
export const proseCalls = (markdown) =>
  proseLines(markdown, true).flatMap(({ line, text }) =>
    [...text.matchAll(/`([A-Z]\w*\.[a-z]\w*\(\{[^`]*\}\))`/g)].map((match) => ({ line, code: match[1] }))
  )

/**
 * The names the entry point `name` (`effect-bash/docker`) exports, as its wrapper (written by
 * `scripts/build-entries.mjs`) lists them: read, not imported, so this process loads no `effect`.
 */
const entryExports = (packageRoot, manifest, name) => {
  const subpath = `.${name.slice(manifest.name.length)}`
  const source = readFileSync(join(packageRoot, manifest.exports[subpath].default), "utf8")
  return (/^export const \{([^}]*)\}/m.exec(source)?.[1] ?? "").split(",").map((export_) => export_.trim())
}

/**
 * A TypeScript file that type-checks the prose's call `code`: `before` (the code above it), then an
 * import of the call's module from the entry point that exports it, unless `before` imports it.
 */
const proseCallFile = (code, before, exportsOf) => {
  const module = /^\w+/.exec(code)[0]
  const imported = new RegExp(`import\\s*\\{[^}]*\\b${module}\\b[^}]*\\}`).test(before)
  const entry = proseEntries.find((name) => exportsOf[name].includes(module))
  const importLine = imported || entry === undefined ? "" : `import { ${module} } from "${entry}"\n`
  return `${importLine}${before}\nexport const proseCall = ${code.replaceAll("…", "")}\n`
}

/**
 * What is wrong with the links of the shipped documents: a relative link or image must name a file the
 * package ships (`shipped`: paths relative to the package root), and an anchor a heading of its target.
 *
 * @param {{ packageRoot: string, shipped: (path: string) => boolean, files?: Array<string> }} options
 * @returns {Array<string>}
 */
export const linkProblems = ({ packageRoot, shipped, files = documents(packageRoot) }) => {
  const problems = []
  for (const file of files) {
    const markdown = readFileSync(join(packageRoot, file), "utf8")
    for (const { line, text } of proseLines(markdown)) {
      for (const match of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1]
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
        const [path, anchor] = target.split("#")
        const resolved = path === "" ? file : posix.normalize(posix.join(posix.dirname(file), path))
        const where = `${file}:${line}: ${target}`
        if (resolved.startsWith("..") || !existsSync(join(packageRoot, resolved))) {
          problems.push(`${where} names no file`)
        } else if (!shipped(resolved)) {
          problems.push(`${where} is not in the package (package.json "files")`)
        } else if (anchor !== undefined && resolved.endsWith(".md") &&
          !anchors(readFileSync(join(packageRoot, resolved), "utf8")).has(anchor)) {
          problems.push(`${where} names no heading of ${resolved}`)
        }
      }
    }
  }
  return problems
}

/**
 * Whether `path` (relative to the package root) is in the package by package.json's "files", or is one
 * of the files npm always packs.
 *
 * @param {{ files?: Array<string> }} manifest
 */
export const shippedBy = (manifest) => (path) =>
  path === "package.json" || /^(README|LICENSE|LICENCE)(\.|$)/i.test(path) ||
  (manifest.files ?? []).some((entry) => path === entry || path.startsWith(`${entry.replace(/\/$/, "")}/`))

/**
 * What is wrong with the documents' test-kit install commands (`npm i -D vitest@… @effect/vitest@…`):
 * each pin must name the line of the version this repository tests with.
 *
 * @param {{ packageRoot: string, devDependencies: Record<string, string>, files?: Array<string> }} options
 * @returns {Array<string>}
 */
export const testKitProblems = ({ packageRoot, devDependencies, files = documents(packageRoot) }) => {
  const problems = []
  const parts = (range) => range.replace(/^[\^~]/, "").split(".")
  let found = 0
  for (const file of files) {
    const markdown = readFileSync(join(packageRoot, file), "utf8")
    for (const command of markdown.matchAll(/^npm i(?:nstall)? -D (.*)$/gm)) {
      found++
      for (const [, name, range] of command[1].matchAll(/((?:@[\w-]+\/)?[\w-]+)@(\S+)/g)) {
        const tested = devDependencies[name]
        const pinned = parts(range)
        if (tested === undefined) problems.push(`${file}: ${name}@${range} is not a devDependency of this repository`)
        else if (!/^[\^~]?\d+(\.\d+)*$/.test(range) || pinned.some((part, i) => part !== parts(tested)[i])) {
          problems.push(`${file}: ${name}@${range} does not pin the tested line (${tested})`)
        }
      }
    }
  }
  if (found === 0) problems.push("no document gives the test-kit install command (npm i -D vitest@… @effect/vitest@…)")
  return problems
}

/** What each `console.log(...) // "json string"` line of a block must print. */
const expectedPrints = (code) =>
  [...code.matchAll(/console\.log\(.*\)\s*\/\/\s*("(?:[^"\\]|\\.)*")\s*$/gm)].map((match) => JSON.parse(match[1]))

const compilerOptions = {
  target: "ES2022",
  // Effect's platform declarations use DOM types (Transferable, Storage): with skipLibCheck off, a
  // consumer needs the DOM lib whatever it imports from us.
  lib: ["ES2022", "DOM"],
  module: "NodeNext",
  moduleResolution: "NodeNext",
  types: ["node"],
  strict: true,
  skipLibCheck: false,
  // TypeScript's own lib files (lib.*.d.ts) are not what a consumer's check is about.
  skipDefaultLibCheck: true,
  rootDir: "src",
  outDir: "out"
}

/**
 * Type-checks the project in `dir` (its tsconfig.json) and, if it is clean, emits it: the errors
 * (formatted), or [] once emitted. Declaration files are checked as `skipLibCheck: false` would, all
 * of them with `dependencies`, else only the package's own (a file under no `node_modules`, or under
 * `node_modules/<name>`): another package's declarations are that package's to check.
 */
const typeCheck = (dir, name, dependencies) => {
  const config = ts.getParsedCommandLineOfConfigFile(join(dir, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined
  })
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
  const ours = (fileName) => !fileName.includes("/node_modules/") || fileName.includes(`/node_modules/${name}/`)
  const checked = program.getSourceFiles().filter((file) =>
    !program.isSourceFileDefaultLibrary(file) && (dependencies || ours(file.fileName))
  )
  const errors = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
  ]
  // One file at a time: emitting all at once would first check every file, the dependencies' too.
  if (errors.length === 0) {
    for (const file of program.getRootFileNames()) errors.push(...program.emit(program.getSourceFile(file)).diagnostics)
  }
  const host = { getCanonicalFileName: (file) => file, getNewLine: () => "\n", getCurrentDirectory: () => dir }
  return errors.map((diagnostic) => ts.formatDiagnostic(diagnostic, host))
}

/**
 * Runs a command to its end, bounded: `{ status, signal, stdout, stderr, ms }`. The examples run all at
 * once, so on a loaded machine each takes about as long as all of them together: the bound only catches
 * one that hangs, and is far above that.
 */
const run = (command, args, { timeout = 180_000, ...options }) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout)
    child.on("error", (error) => (stderr += String(error)))
    child.on("close", (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr, ms: Date.now() - started })
    })
  })

/**
 * Checks the documents of the package at `packageRoot`, then writes their examples into `dir`,
 * type-checks and runs them. Logs one line per check; resolves to whether all passed.
 *
 * `shipped` tells whether a path is in the package (default: package.json's "files"); `extraFiles`
 * (name → TypeScript source) are checked and run alongside the examples; `checkDependencies` checks the
 * declarations of every package, not only this one's.
 *
 * @param {{ dir: string, packageRoot?: string, bin: (name: string) => string, skip?: RegExp,
 *   shipped?: (path: string) => boolean, extraFiles?: Record<string, string>, checkDependencies?: boolean,
 *   log?: (line: string) => void }} options
 * @returns {Promise<boolean>}
 */
export const checkExamples = async ({ dir, packageRoot = root, bin, skip, shipped, extraFiles = {}, checkDependencies = false, log = console.log }) => {
  const manifest = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"))
  const files = documents(packageRoot)
  let ok = true
  const fail = (line) => {
    ok = false
    log(`FAIL ${line}`)
  }

  const links = linkProblems({ packageRoot, shipped: shipped ?? shippedBy(manifest), files })
  if (links.length > 0) fail(`links that do not resolve in the package:\n${links.join("\n")}`)
  else log(`ok   every relative link of ${files.join(", ")} resolves in the package`)
  const kit = testKitProblems({ packageRoot, devDependencies: manifest.devDependencies ?? {}, files })
  if (kit.length > 0) fail(`test-kit pins:\n${kit.join("\n")}`)
  else log("ok   the test-kit install commands pin the tested vitest lines")

  rmSync(join(dir, "src"), { recursive: true, force: true })
  rmSync(join(dir, "out"), { recursive: true, force: true })
  mkdirSync(join(dir, "src"), { recursive: true })
  const examples = []
  for (const file of files) {
    const blocks = codeBlocks(readFileSync(join(packageRoot, file), "utf8"))
    for (const block of blocks.filter((block) => !/^(ts|typescript)$/.test(block.lang))) {
      fail(`${file}:${block.line}: a \`\`\`${block.lang} block is not type-checked; make it \`\`\`ts`)
    }
    for (const block of blocks.filter((block) => /^(ts|typescript)$/.test(block.lang))) {
      const label = `${file}:${block.line}`
      if (skip !== undefined && skip.test(block.code)) {
        log(`skip ${label} (matches ${skip})`)
        continue
      }
      const isTest = /from "@effect\/vitest"/.test(block.code)
      const name = `${file.replace(/\.md$/, "").replace(/\W+/g, "-").toLowerCase()}-line-${block.line}${isTest ? ".test" : ""}`
      writeFileSync(join(dir, "src", `${name}.ts`), block.code)
      examples.push({ ...block, name, isTest, label })
    }
  }
  const exportsOf = Object.fromEntries(proseEntries.map((name) => [name, entryExports(packageRoot, manifest, name)]))
  for (const file of files) {
    const markdown = readFileSync(join(packageRoot, file), "utf8")
    const blocks = codeBlocks(markdown).filter((block) => /^(ts|typescript)$/.test(block.lang))
    for (const call of proseCalls(markdown)) {
      const before = blocks.filter((block) => block.line < call.line).at(-1)?.code ?? ""
      const name = `${file.replace(/\.md$/, "").replace(/\W+/g, "-").toLowerCase()}-line-${call.line}-prose`
      const code = proseCallFile(call.code, before, exportsOf)
      writeFileSync(join(dir, "src", `${name}.ts`), code)
      examples.push({ lang: "ts", line: call.line, code, name, isTest: false, typeOnly: true, label: `${file}:${call.line} \`${call.code}\`` })
    }
  }
  for (const [file, code] of Object.entries(extraFiles)) {
    writeFileSync(join(dir, "src", file), code)
    examples.push({ lang: "ts", line: 0, code, name: file.replace(/\.ts$/, ""), isTest: false, label: file })
  }
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"] }, null, 2) + "\n")

  const started = Date.now()
  const errors = typeCheck(dir, manifest.name, checkDependencies)
  const what = `type-check of ${examples.length} examples (${examples.filter((example) => example.typeOnly).length} of them calls in the prose; strict, NodeNext, the declarations of ${checkDependencies ? "every package" : manifest.name} checked; ${Date.now() - started} ms)`
  if (errors.length > 0) {
    fail(`${what}:\n${errors.join("")}`)
    return ok
  }
  log(`ok   ${what}`)

  // A config of its own, so vitest does not pick up this repository's. The examples share one worker
  // thread: each loads effect and the package once, not once per file.
  const vitestConfig = join(dir, "out", "vitest.config.mjs")
  const vitestTest = {
    root: join(dir, "out"),
    include: ["*.test.js"],
    pool: "threads",
    poolOptions: { threads: { singleThread: true, isolate: false } }
  }
  writeFileSync(vitestConfig, `export default ${JSON.stringify({ test: vitestTest })}\n`)
  const tests = examples.filter((example) => example.isTest)
  const outcomes = await Promise.all([
    ...examples.filter((example) => !example.isTest && !example.typeOnly).map(async (example) => ({
      examples: [example],
      how: "node",
      result: await run(process.execPath, [join(dir, "out", `${example.name}.js`)], { cwd: dir })
    })),
    ...(tests.length === 0 ? [] : [(async () => ({
      examples: tests,
      how: "vitest",
      result: await run(
        bin("vitest"),
        ["run", "--config", vitestConfig, "--reporter", "verbose", ...tests.map((example) => join(dir, "out", `${example.name}.js`))],
        { cwd: join(dir, "out") }
      )
    }))()])
  ])
  for (const { examples: ran, how, result } of outcomes) {
    const printed = result.stdout ?? ""
    const missing = ran.flatMap((example) => expectedPrints(example.code)).filter((text) => !printed.includes(text))
    const where = `${ran.map((example) => example.label).join(", ")} (${how}, ${result.ms} ms)`
    if (result.status !== 0) fail(`${where} exited ${result.status ?? result.signal}:\n${printed}${result.stderr}`)
    else if (missing.length > 0) fail(`${where} did not print ${missing.map((text) => JSON.stringify(text)).join(", ")}:\n${printed}`)
    else log(`ok   ${where}`)
  }
  return ok
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const option = (name) => {
    const index = args.indexOf(name)
    return index === -1 ? undefined : args[index + 1]
  }
  const dir = resolve(option("--dir") ?? join(root, ".scratch", "readme-examples"))
  const skip = option("--skip")
  const ok = await checkExamples({
    dir,
    bin: (name) => join(root, "node_modules", ".bin", name),
    ...(skip === undefined ? {} : { skip: new RegExp(skip) })
  })
  console.log(ok ? "PASS readme examples" : "FAIL readme examples")
  process.exit(ok ? 0 : 1)
}
