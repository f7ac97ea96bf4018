/**
 * Work item (f): cleaning a stream's text for the model (ANSI stripping, `\r` folding), on ordinary
 * and adversarial inputs. A quadratic cleaner blocks the event loop — every session with it — for
 * seconds on 256 KB of C1 controls; a linear one takes about as long per byte on any input.
 */
import { performance } from "node:perf_hooks"
import { modelText } from "../../src/tool/modelText.js"
import type { ModelTextTiming } from "../lib/results.js"
import { median } from "../lib/stats.js"

const KiB = 1024

/** The inputs, each `bytes` long (UTF-16 code units). */
export const modelTextInputs = (bytes: number): ReadonlyArray<{ readonly input: string; readonly text: string }> => {
  const fill = (unit: string) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)
  return [
    { input: "coloured compiler output", text: fill("\x1b[1;31merror\x1b[0m: src/a.ts(1,2): expected ';'\n") },
    { input: "C1 controls (U+009D), never terminated", text: fill("\u009d") },
    { input: "OSC introducers (ESC ]), never terminated", text: fill("\x1b]") },
    { input: "carriage-return progress", text: fill("42%\r") }
  ]
}

/** Median wall time of `rounds` cleanings of each input at each size. */
export const measureModelText = (sizes: ReadonlyArray<number>, rounds: number): Array<ModelTextTiming> =>
  sizes.flatMap((bytes) =>
    modelTextInputs(bytes).map(({ input, text }) => {
      const samples: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const start = performance.now()
        modelText(text, true)
        samples.push(performance.now() - start)
      }
      return { input, kib: bytes / KiB, medianMs: median(samples) }
    })
  )
