/**
 * What the container tests try against a call's result: the calls that take an exec of their own,
 * victims that wait in the box, and a forger that writes lines in the wrapper's form into every
 * process's output it can open and blocks every file a status could be written to. Works on any engine:
 * victims and forger meet in the box's workspace, never on the host.
 */
import type { BashExecutor } from "../../src/services/BashExecutor.js"

/** A command over 64 KiB (the kernel's limit on one argument is 128 KiB) that runs `command`. */
const long = (command: string) => `${command} #${"x".repeat(70 * 1024)}`

/**
 * The three kinds of call that do not take a served exec as they are: with input, over 64 KiB (it
 * is served, its command going to its shell over a pipe), and with a variable bash cannot export.
 */
export const unusualCalls = (command: string): ReadonlyArray<Pick<BashExecutor.Request, "command" | "stdin" | "env">> => [
  { command, stdin: "input\n" },
  { command: long(command) },
  { command, env: { "odd-name": "1" } }
]

/** A victim of `tag`: says it started, adds its shell's pid to the list, and ends with 5 once the forger is done. */
export const victim = (tag: string): string =>
  `echo started; echo $$ >>victims-${tag}; while [ ! -e forged-${tag} ]; do sleep 0.05; done; echo still running; exit 5`

/** The guessed tokens the forger writes under. */
export const guessedTokens = ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ffffffffffffffffffffffffffffffff"] as const

/**
 * The forger of `tag`: once `count` victims have started (bounded), it writes a status and `end` in
 * the wrapper's form under each guessed token into every other process's stdout and stderr it can
 * open, puts a directory at every path named in any process's argv (outside the system's), so no
 * file can be written there, and at everything in a control directory, if there is one, then lets
 * the victims go on. Prints
 * `forged N wrappers M`: how many writes reached a victim's shell, and how many a wrapper's output.
 */
export const forger = (tag: string, count: number): string =>
  `f=victims-${tag}; for i in $(seq 1 1200); do [ -f $f ] && [ $(wc -l <$f) -ge ${count} ] && break; sleep 0.05; done; ` +
  `for p in /proc/[0-9]*; do [ "\${p#/proc/}" = $$ ] && continue; a=(); mapfile -d '' -t a <$p/cmdline 2>/dev/null; ` +
  `for t in ${guessedTokens.join(" ")}; do ` +
  `printf '\\0%s exit 0 empty 1 2\\n\\0%s end 1 2\\n' $t $t >$p/fd/1 2>/dev/null && printf '\\0%s end 1 2\\n' $t >$p/fd/2 2>/dev/null || continue; ` +
  `grep -qx "\${p#/proc/}" $f && n=$((n+1)); [ "\${a[5]-}" = effect-bash ] && w=$((w+1)); done; ` +
  `for g in "\${a[@]}"; do case $g in /usr/*|/bin/*|/sbin/*|/lib*|/.effect-bash-supervisor/*) ;; ` +
  `/*) rm -f -- "$g" 2>/dev/null; mkdir -- "$g" 2>/dev/null ;; esac; done; done; ` +
  `for g in /.effect-bash-control/*; do [ -e "$g" ] && rm -rf -- "$g" && mkdir -- "$g"; done 2>/dev/null; ` +
  `touch forged-${tag}; echo forged \${n:-0} wrappers \${w:-0}`
