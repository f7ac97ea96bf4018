/**
 * The README's TypeScript examples as a consumer project: every fenced ```ts block becomes a file
 * that is type-checked strictly (NodeNext, `skipLibCheck: false`) against the package as a consumer
 * imports it (`effect-bash`, `effect-bash/ai`, `effect-bash/testing`, `effect-bash/cordis`), then run:
 * a block that uses `@effect/vitest` runs under vitest, any other under node. A `console.log(...)`
 * line ending in a comment holding a JSON string (`// "hi\n"`) must print that string.
 *
 * In this repository the project lives under `.scratch/` and reaches the package through its
 * self-reference (so, `dist/`); the pack check (`scripts/pack-check.mjs`) uses it in an app that
 * installed the packed tarball.
 *
 *   node scripts/readme-examples.mjs [--dir DIR] [--skip REGEX]
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

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
  noEmitOnError: true,
  rootDir: "src",
  outDir: "out"
}

const run = (command, args, options) => {
  const started = Date.now()
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL", ...options })
  return { ...result, ms: Date.now() - started }
}

/**
 * Writes the examples into `dir`, type-checks and runs them. Returns one line per check and whether all passed.
 *
 * `extraFiles` (name → TypeScript source) are checked and run alongside.
 *
 * @param {{ dir: string, readme?: string, bin: (name: string) => string, skip?: RegExp,
 *   extraFiles?: Record<string, string>, log?: (line: string) => void }} options
 */
export const checkExamples = ({ dir, readme = join(root, "README.md"), bin, skip, extraFiles = {}, log = console.log }) => {
  const blocks = codeBlocks(readFileSync(readme, "utf8"))
  let ok = true
  const fail = (line) => {
    ok = false
    log(`FAIL ${line}`)
  }
  const untyped = blocks.filter((block) => !/^(ts|typescript)$/.test(block.lang))
  for (const block of untyped) fail(`README.md:${block.line}: a \`\`\`${block.lang} block is not type-checked; make it \`\`\`ts`)

  rmSync(join(dir, "src"), { recursive: true, force: true })
  rmSync(join(dir, "out"), { recursive: true, force: true })
  mkdirSync(join(dir, "src"), { recursive: true })
  const examples = []
  for (const block of blocks.filter((block) => /^(ts|typescript)$/.test(block.lang))) {
    if (skip !== undefined && skip.test(block.code)) {
      log(`skip README.md:${block.line} (matches ${skip})`)
      continue
    }
    const isTest = /from "@effect\/vitest"/.test(block.code)
    const name = `readme-line-${block.line}${isTest ? ".test" : ""}`
    writeFileSync(join(dir, "src", `${name}.ts`), block.code)
    examples.push({ ...block, name, isTest })
  }
  for (const [file, code] of Object.entries(extraFiles)) {
    writeFileSync(join(dir, "src", file), code)
    examples.push({ lang: "ts", line: 0, code, name: file.replace(/\.ts$/, ""), isTest: false, label: file })
  }
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"] }, null, 2) + "\n")

  const tsc = run(bin("tsc"), ["-p", join(dir, "tsconfig.json")], { cwd: dir, timeout: 120_000 })
  if (tsc.status !== 0) {
    fail(`type-check of ${examples.length} examples (${tsc.ms} ms):\n${tsc.stdout}${tsc.stderr}`)
    return ok
  }
  log(`ok   type-check of ${examples.length} examples (strict, NodeNext, skipLibCheck false; ${tsc.ms} ms)`)

  // A config of its own, so vitest does not pick up this repository's.
  const vitestConfig = join(dir, "out", "vitest.config.mjs")
  writeFileSync(vitestConfig, `export default { test: { root: ${JSON.stringify(join(dir, "out"))}, include: ["*.test.js"] } }\n`)
  for (const example of examples) {
    const file = join(dir, "out", `${example.name}.js`)
    const result = example.isTest ?
      run(bin("vitest"), ["run", "--config", vitestConfig, "--reporter", "dot", file], { cwd: join(dir, "out") }) :
      run(process.execPath, [file], { cwd: dir })
    const printed = result.stdout ?? ""
    const missing = expectedPrints(example.code).filter((text) => !printed.includes(text))
    const where = `${example.label ?? `README.md:${example.line}`} (${example.isTest ? "vitest" : "node"}, ${result.ms} ms)`
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
  const ok = checkExamples({
    dir,
    bin: (name) => join(root, "node_modules", ".bin", name),
    ...(skip === undefined ? {} : { skip: new RegExp(skip) })
  })
  console.log(ok ? "PASS readme examples" : "FAIL readme examples")
  process.exit(ok ? 0 : 1)
}
