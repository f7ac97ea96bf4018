/**
 * Whether bubblewrap can start here. CI installs it; a machine without it skips the sandbox tests.
 */
import { spawnSync } from "node:child_process"

export const bwrapUsable =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--", "true"]).status === 0

/** Whether `socat` is on PATH: the allow-listed network's bridge needs it. CI installs it. */
export const socatUsable = spawnSync("sh", ["-c", "command -v socat"]).status === 0
