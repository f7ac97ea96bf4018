/**
 * The shape of `bench/results.json`.
 */
import type { ColdStartRow } from "../sections/coldStart.js"
import type { Phases } from "../sections/phases.js"
import type { Machine } from "./machine.js"

/** One contender's numbers for one work item. */
export interface ContenderStat {
  readonly median: number
  readonly samples: ReadonlyArray<number>
  /** `median / raw median` (for throughput: higher is better; for time: lower is better). */
  readonly ratioToRaw: number
  /** Median CPU time of this process per round, in ms (children excluded). */
  readonly cpuMs: number
  readonly cpuRatioToRaw: number
  /** Median JS heap allocated per round, in KiB. */
  readonly allocatedKiB: number
}

/** One work item run by every contender. */
export interface Comparison {
  readonly id: string
  readonly title: string
  readonly unit: "ms" | "MiB/s"
  /** How many calls one round made (for per-call figures); 1 for throughput. */
  readonly calls: number
  readonly contenders: Readonly<Record<string, ContenderStat>>
}

/** What one (d) measurement, run in its own node process, reports; all sizes in bytes. */
export interface RssReport {
  /** `ours` (through LocalBashExecutor) or `raw` (raw child_process piping to a file, for reference). */
  readonly contender: "ours" | "raw"
  readonly outputBytes: number
  /** Our executor's `maxSpillBytes`; 0 for raw. */
  readonly maxSpillBytes: number
  readonly baselineRss: number
  readonly sampledPeakRss: number
  readonly maxRssBefore: number
  readonly maxRssAfter: number
  /** Peak over baseline: the sampled peak, or the kernel's maxRSS when that rose during the run. */
  readonly growth: number
  readonly elapsedMs: number
  /** A file holding the whole output was reported (raw always writes one). */
  readonly spilled: boolean
  readonly exitCode: number | null
}

/** One settle-time measurement (work item e). */
export interface Settle {
  readonly id: string
  readonly command: string
  readonly timeoutMs: number
  readonly graceMs: number
  readonly ours: { readonly median: number; readonly max: number; readonly samples: ReadonlyArray<number> }
  readonly raw: { readonly median: number; readonly max: number; readonly samples: ReadonlyArray<number> }
}

/** One model-text cleaning measurement (work item f). */
export interface ModelTextTiming {
  readonly input: string
  readonly kib: number
  readonly medianMs: number
}

/** One target, judged. */
export interface Target {
  readonly id: string
  readonly description: string
  readonly measured: number
  readonly limit: number
  readonly unit: string
  /** `<=` or `>=` or `<`: how `measured` must compare to `limit`. */
  readonly relation: "<=" | ">=" | "<"
  readonly pass: boolean
}

/** (g) One executor's cost per call of `true`, and what it adds to the plain local executor. */
export interface ModeCost {
  readonly id: string
  readonly label: string
  readonly msPerCall: number
  readonly addedMs: number
}

/** One contender's cost per call of `true` in one work item: medians of the rounds, divided by the calls. */
export interface PerCallCost {
  /** Wall time per call, in ms (for the concurrent item: the round's wall time over all its calls). */
  readonly wallMs: number
  /** CPU time of the node process per call (children excluded), in ms. */
  readonly cpuMs: number
  /** JS heap allocated per call, in KiB. */
  readonly allocatedKiB: number
}

/** One contender's per-call costs, sequential (a), 8-concurrent (b) and sequential with pauses (h). */
export interface PerCall {
  readonly id: string
  readonly label: string
  readonly level: "process" | "executor" | "tool"
  readonly sequential: PerCallCost
  readonly concurrent: PerCallCost
  /** Wall time per call alone, the pauses between calls not counted. */
  readonly paced: { readonly wallMs: number }
}

/** One contender's wall time per call of `true`, over every call it made (items k and l). */
export interface CallRow {
  readonly id: string
  readonly label: string
  readonly medianMs: number
  readonly p90Ms: number
  readonly calls: number
  /** Item (l): the median of each round's block, in round order, so two contenders pair by round. */
  readonly roundMediansMs?: ReadonlyArray<number>
}

/** When an item was measured: an item run alone (`--write`) keeps its own. */
export interface ItemRun {
  readonly date: string
  /** 1-minute load average when the item started and ended. */
  readonly loadAverage: { readonly start: number; readonly end: number }
}

/** (k) What a run found: a `true` call in a warm container, through our executor and the docker CLI, and locally. */
export type ContainerFound =
  | { readonly image: string; readonly rows: ReadonlyArray<CallRow> }
  /** Why the item was skipped: no engine answers, or the image is missing. */
  | { readonly missing: string }

/** (k) with when it was measured. */
export type ContainerCalls = ItemRun & ContainerFound

/** (m) One contender's cost per proxied call. */
export interface NetworkCost {
  readonly id: string
  readonly label: string
  readonly msPerCall: number
  /** The contender it is measured against: the same executor without the allow-list. */
  readonly baseline: string
  /** Over {@link baseline}. */
  readonly addedMs: number
}

/** (m) What a run found: the sandbox's contenders, and the containers' unless `containerMissing` says why not. */
export interface NetworkFound {
  /** Sequential calls per contender in a round, and the rounds. */
  readonly count: number
  readonly rounds: number
  readonly rows: ReadonlyArray<NetworkCost>
  readonly containerMissing?: string
}

/** (m) with when it was measured. */
export type NetworkItem = ItemRun & NetworkFound

/** (l) Our executor with `posix_spawn`, with `directSpawn`, and the reference, at each host heap size. */
export interface HeapItem extends ItemRun {
  readonly sizes: ReadonlyArray<HeapCalls>
}

/** (l) The contenders in a host of one heap size. */
export interface HeapCalls {
  /** Live JS heap the host process kept while it measured (requested). */
  readonly retainedMiB: number
  /** `heapUsed` and RSS of the host process when it measured. */
  readonly heapUsedMiB: number
  readonly rssMiB: number
  readonly rows: ReadonlyArray<CallRow>
}

/** (j) Cold start: fresh node processes, measured in a run of their own (see `date`, `loadAverage`). */
export interface ColdStart {
  readonly date: string
  readonly loadAverage: { readonly start: number; readonly end: number }
  readonly rounds: number
  readonly rssRounds: number
  readonly rows: ReadonlyArray<ColdStartRow>
}

/** Everything one run produced. */
export interface BenchResults {
  readonly machine: Machine
  /** 1-minute load average when the run started and ended: other work on the machine skews the numbers. */
  readonly loadAverage: { readonly start: number; readonly end: number }
  readonly date: string
  readonly durationSeconds: number
  readonly settings: Readonly<Record<string, number | string>>
  readonly labels: Readonly<Record<string, string>>
  readonly comparisons: ReadonlyArray<Comparison>
  readonly rss: ReadonlyArray<RssReport>
  readonly settle: ReadonlyArray<Settle>
  readonly modelText: ReadonlyArray<ModelTextTiming>
  readonly modes?: ReadonlyArray<ModeCost>
  readonly perCall: ReadonlyArray<PerCall>
  /** (i) Where a call's wall time goes; absent where bash has no `$EPOCHREALTIME`. */
  readonly phases?: ReadonlyArray<Phases>
  /** (k) A call in a warm container. */
  readonly container?: ContainerCalls
  /** (l) posix_spawn, direct spawn and the reference in a small and a large host. */
  readonly heap?: HeapItem
  /** (j) Cold start of the command and the entry points. */
  readonly coldStart?: ColdStart
  /** (m) What an allow-listed network adds to a small `curl`. */
  readonly network?: NetworkItem
  /** Why a contender or target is missing from this run (e.g. the reference not installed). */
  readonly notes: ReadonlyArray<string>
  readonly targets: ReadonlyArray<Target>
}

/** Judges `measured` against `limit` under `relation`. */
export const judge = (
  id: string,
  description: string,
  measured: number,
  relation: Target["relation"],
  limit: number,
  unit: string
): Target => ({
  id,
  description,
  measured,
  limit,
  unit,
  relation,
  pass: relation === "<=" ? measured <= limit : relation === ">=" ? measured >= limit : measured < limit
})
