/**
 * Work item (c): a large stdout written to a file through this process, in MiB/s.
 */
import { stat, unlink } from "node:fs/promises"
import type { Runner } from "../runners/Runner.js"
import { MiB, timed } from "../lib/stats.js"

/** (c) Throughput in MiB/s of `bytes` zero bytes from `head -c`, checked for completeness, file removed after. */
export const outputToFile = (bytes: number, dir: string) => async (runner: Runner): Promise<number> => {
  const runToFile = runner.runToFile
  if (runToFile === undefined) throw new Error(`${runner.label} does not write to a file`)
  const { ms, value: file } = await timed(() => runToFile(`head -c ${bytes} /dev/zero`, dir))
  const { size } = await stat(file.path)
  await unlink(file.path)
  if (size !== bytes) throw new Error(`${runner.label} wrote ${size} of ${bytes} bytes to ${file.path}`)
  return bytes / MiB / (ms / 1000)
}
