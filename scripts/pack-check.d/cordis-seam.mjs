/**
 * Pack-check hook: a Cordis plugin written the reference's way — synchronous `ctx.bash.resolve`,
 * `start`, `readOutput`, `kill`, and `ctx.bash.run(ctx.bash.resolve(...))` — against the plugin as
 * installed from the tarball (upstream `cordis` from this repository's dev dependencies hosts it; the
 * plugin imports nothing from Cordis at run time).
 */
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Context } from "cordis"

export default async ({ app, log }) => {
  const adapter = join(app, "node_modules", "effect-bash", "dist", "src", "cordis-adapter.js")
  const { default: EffectBash } = await import(pathToFileURL(adapter).href)
  const root = new Context()
  try {
    await root.plugin(EffectBash, { graceMs: 300 })
    let bash
    await root.plugin({ name: "reference-style", inject: ["bash"], apply: (ctx) => void (bash = ctx.bash) })
    const result = await bash.run(bash.resolve({ command: "echo hi; exit 3", timeoutMs: 5_000 }))
    const background = bash.start(bash.resolve({ command: "echo started; exec sleep 30" }))
    const running = background.status === "running"
    const killed = background.kill() === true
    await background.done
    const read = background.readOutput()
    const ok = result.exitCode === 3 && result.stdout.text === "hi\n" && running && killed &&
      background.status === "killed" && typeof read.delta === "string"
    if (!ok) log(JSON.stringify({ result, running, killed, status: background.status, read }))
    return ok
  } finally {
    await root.fiber.dispose()
  }
}
