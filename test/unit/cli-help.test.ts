/**
 * How @effect/cli's help and usage text is tidied: `effect-bash run …` usage lines, no generic
 * sentences, colour only on a terminal without `NO_COLOR`.
 */
import { describe, expect, it } from "vitest"
import { tidyCliText } from "../../src/cli/helpText.js"

const terminal = { isTTY: true } as NodeJS.WriteStream
const pipe = { isTTY: false } as NodeJS.WriteStream
const help = "\x1b[0;1mUSAGE\x1b[0m\n\n$ run [--json] <command>...\n\n\x1b[0;1m--json\x1b[0m\n\n  A true or false value.\n\n  Print JSON\n"

describe("tidyCliText", () => {
  const saved = process.env["NO_COLOR"]
  const withNoColor = (value: string | undefined, body: () => void) => {
    if (value === undefined) delete process.env["NO_COLOR"]
    else process.env["NO_COLOR"] = value
    try {
      body()
    } finally {
      if (saved === undefined) delete process.env["NO_COLOR"]
      else process.env["NO_COLOR"] = saved
    }
  }

  it("keeps colour on a terminal without NO_COLOR", () =>
    withNoColor(undefined, () =>
      expect(tidyCliText(help, terminal)).toBe(
        "\x1b[0;1mUSAGE\x1b[0m\n\neffect-bash run [--json] <command>...\n\n\x1b[0;1m--json\x1b[0m\n\n  Print JSON\n"
      )))

  it("drops colour in a pipe, and on a terminal when NO_COLOR is set", () => {
    const plain = "USAGE\n\neffect-bash run [--json] <command>...\n\n--json\n\n  Print JSON\n"
    withNoColor(undefined, () => expect(tidyCliText(help, pipe)).toBe(plain))
    withNoColor("1", () => expect(tidyCliText(help, terminal)).toBe(plain))
  })

  it("leaves the root usage line as it is, without the $", () =>
    expect(tidyCliText("$ effect-bash\n", pipe)).toBe("effect-bash\n"))
})
