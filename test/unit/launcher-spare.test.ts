/**
 * Which envs a launcher's spare may serve: those whose shell level bash keeps as it is (a spare's
 * `exec` lowers it again only where bash did not reset it), and none holding a variable of bash's
 * own that the spare's start-up would take in.
 */
import { describe, expect, it } from "@effect/vitest"
import { spareServes } from "../../src/layers/internal/spawner/spare.js"

describe("a spare", () => {
  it("serves an env whose SHLVL is unset, 0 to 998, or not a number (bash takes it as 0)", () => {
    for (const SHLVL of [undefined, "0", "1", "998", "abc", ""]) {
      expect(spareServes(SHLVL === undefined ? {} : { SHLVL })).toBe(true)
    }
  })

  it("does not serve one whose SHLVL bash resets: below 0, or from 999 on (1000 in the command's bash)", () => {
    for (const SHLVL of ["-1", "-5", " -1", "999", "1000", "5000"]) expect(spareServes({ SHLVL })).toBe(false)
  })

  it("does not serve one holding a dynamic variable of bash (BASH_ARGV0 would be the spare's $0)", () => {
    for (const name of [
      "BASH_ARGV0", "BASH_COMMAND", "BASH_SUBSHELL", "BASHPID", "COMP_WORDBREAKS", "EPOCHREALTIME", "EPOCHSECONDS",
      "HISTCMD", "LINENO", "RANDOM", "SRANDOM"
    ]) expect(spareServes({ PATH: "/usr/bin", [name]: "42" })).toBe(false)
    expect(spareServes({ PATH: "/usr/bin", SECONDS: "42", OLDPWD: "/" })).toBe(true)
  })
})
