/**
 * Whether bubblewrap can start here. CI installs it; a machine without it skips the sandbox tests.
 */
import { spawnSync } from "node:child_process"

export const bwrapUsable =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--", "true"]).status === 0
