/**
 * Which envs a launcher's spare may serve: those whose shell level bash keeps as it is (a spare's
 * `exec` lowers it again only where bash did not reset it).
 */
import { describe, expect, it } from "@effect/vitest"
import { spareServes } from "../../src/layers/internal/spawner/Launcher.js"

describe("a spare", () => {
  it("serves an env whose SHLVL is unset, 0 to 998, or not a number (bash takes it as 0)", () => {
    for (const SHLVL of [undefined, "0", "1", "998", "abc", ""]) {
      expect(spareServes(SHLVL === undefined ? {} : { SHLVL })).toBe(true)
    }
  })

  it("does not serve one whose SHLVL bash resets: below 0, or from 999 on (1000 in the command's bash)", () => {
    for (const SHLVL of ["-1", "-5", " -1", "999", "1000", "5000"]) expect(spareServes({ SHLVL })).toBe(false)
  })
})
