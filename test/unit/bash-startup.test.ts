/**
 * One list of what bash reads from its environment as it starts, and every shell we start guarded
 * against all of it: the executor drops it from the inherited environment, the container wrapper hides
 * it from its own shell.
 */
import { describe, expect, it } from "@effect/vitest"
import { bashStartupVariables } from "../../src/layers/internal/bashStartup.js"
import { wrapperEnv } from "../../src/layers/internal/container/wrapper.js"
import { buildEnv } from "../../src/layers/internal/executor/environment.js"

const startupState = [...bashStartupVariables, "BASH_FUNC_ls%%"]

describe("bash start-up state", () => {
  it("names every variable bash takes in as it starts", () => {
    expect([...bashStartupVariables].sort()).toEqual(
      ["BASHOPTS", "BASH_ENV", "ENV", "GLOBIGNORE", "POSIXLY_CORRECT", "SHELLOPTS", "TMOUT"]
    )
  })

  it.each(startupState)("%s: dropped from the inherited environment, even when allow-listed", (name) => {
    expect(buildEnv({ [name]: "x" }, { allow: [name], deny: [] }, undefined, undefined)).not.toHaveProperty(name)
  })

  it.each([...bashStartupVariables])("%s: hidden from the container wrapper's own shell", (name) => {
    expect(wrapperEnv({ [name]: "x" })).toEqual({ [`__effect_bash_saved_${name}`]: "x" })
  })

  it("leaves other variables to every shell", () => {
    expect(buildEnv({ BASH_VERSION_PIN: "5" }, { allow: [], deny: [] }, undefined, undefined)).toHaveProperty("BASH_VERSION_PIN")
    expect(wrapperEnv({ BASH_VERSION_PIN: "5" })).toEqual({ BASH_VERSION_PIN: "5" })
  })
})
