/**
 * The `effect-bash` command's program, which the executable (`bin.ts`) runs from its bundle.
 * `NodeRuntime.runMain` turns SIGINT/SIGTERM (and here SIGHUP) into an
 * interrupt, so every scope closes and every process group we started dies before the process exits.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeFs from "node:fs"
import * as Tty from "node:tty"
import { main } from "./app.js"
import { processExitCode } from "./exit.js"
import { listenForStdioErrors } from "./output.js"

listenForStdioErrors()

let interruptedBy: string | undefined
// runMain interrupts on the first signal and then stops listening; staying subscribed keeps a
// second Ctrl-C from killing node mid-cleanup (that signal escalates every kill to SIGKILL instead,
// see shutdown.ts).
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    interruptedBy ??= signal
  })
}
// A closed terminal (SIGHUP) would kill node outright, skipping every finalizer: treat it as SIGTERM.
process.on("SIGHUP", () => {
  interruptedBy ??= "SIGHUP"
  process.emit("SIGTERM", "SIGTERM")
})

// Node restores a terminal's settings as it exits, and crashes (SIGSEGV, SIGABRT) when that terminal has
// hung up. So once a terminal among stdin, stdout and stderr has hung up, the program ends (its
// finalizers run) by SIGHUP, without Node's exit: a shell reports 129 all the same. The SIGHUP's own
// listener may not have run yet when the program ends (a question on the terminal ends by itself when
// its input does), so a hung-up terminal is also recognised by itself: it answers no terminal request
// any more.
const terminalFds = [0, 1, 2].filter((fd) => Tty.isatty(fd))
const endsByHangup = () => interruptedBy === "SIGHUP" || terminalFds.some((fd) => !Tty.isatty(fd))

const commandLine = (): Uint8Array | undefined => {
  try {
    return NodeFs.readFileSync("/proc/self/cmdline")
  } catch {
    return undefined
  }
}

NodeRuntime.runMain(main(process.argv, { commandLine: commandLine(), stdinIsTerminal: Tty.isatty(0) }), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit) => {
    if (terminalFds.length > 0 && endsByHangup()) {
      process.removeAllListeners("SIGHUP")
      process.kill(process.pid, "SIGHUP")
    }
    process.exit(processExitCode(exit, interruptedBy))
  }
})
