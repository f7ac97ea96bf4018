/**
 * Seeded generators of hostile tool arguments for the reliability fuzz: a deterministic PRNG
 * (mulberry32) so a failure can be replayed from its seed (`FUZZ_SEED=<n> npx vitest run ...`).
 */

/** A deterministic source of randomness. */
export interface Rng {
  readonly seed: number
  /** In [0, 1). */
  readonly next: () => number
  readonly int: (below: number) => number
  readonly chance: (probability: number) => boolean
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

export const makeRng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (below: number) => Math.floor(next() * below)
  return { seed, next, int, chance: (probability) => next() < probability, pick: (items) => items[int(items.length)]! }
}

/** The seed of this run: `FUZZ_SEED` when set, else a fixed default (the suite is deterministic). */
export const fuzzSeed = (fallback: number): number => {
  const given = Number(process.env["FUZZ_SEED"])
  return Number.isSafeInteger(given) ? given : fallback
}

const numbers = [0, -0, 1, -1, 0.5, 1.5, 100, 2 ** 31, Number.MAX_SAFE_INTEGER, 1e308, -1e308, 5e-324, NaN, Infinity, -Infinity]

const huge = (rng: Rng) => rng.pick(["x", "é", "\u0000", "🙂", "\u001b[31m"]).repeat(rng.pick([4_096, 70_000, 200_000]))

/** A hostile string: blank, control characters, NUL bytes, lone surrogates, ANSI, huge, or plain. */
export const hostileString = (rng: Rng): string => {
  switch (rng.int(12)) {
    case 0:
      return ""
    case 1:
      return rng.pick([" ", "\t\n", "\u00a0", "\r\n"])
    case 2:
      return `echo a\u0000b`
    case 3:
      return "\ud800 lone surrogate"
    case 4:
      return "\u001b]0;title\u0007\u001b[2J\u009b31m coloured"
    case 5:
      return rng.chance(0.2) ? huge(rng) : "x".repeat(rng.int(300))
    case 6:
      return rng.pick(["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"])
    case 7:
      return rng.pick(["../../etc", "/", ".", "~", "-rf", "--version", "$(id)", "`id`", "a'b\"c"])
    default:
      return rng.pick(["echo hi", "ls -la", "true", "printf '%s' x", "list the files here", "bash-1", "bash-2"])
  }
}

/** Any value a JSON decoder (or a sloppy host) could hand over, nested up to `depth`. */
export const hostileValue = (rng: Rng, depth = 3): unknown => {
  switch (rng.int(depth > 0 ? 10 : 7)) {
    case 0:
      return undefined
    case 1:
      return null
    case 2:
      return rng.chance(0.5)
    case 3:
    case 4:
      return rng.pick(numbers)
    case 5:
    case 6:
      return hostileString(rng)
    case 7:
      return Array.from({ length: rng.int(4) }, () => hostileValue(rng, depth - 1))
    case 8:
      return rng.chance(0.3) ? deeplyNested(rng.pick([50, 500, 5_000])) : hostileObject(rng, depth - 1)
    default:
      return pollutingObject(rng)
  }
}

/** `{ a: { a: { … } } }`, `levels` deep. */
export const deeplyNested = (levels: number): unknown => {
  let value: unknown = "bottom"
  for (let level = 0; level < levels; level++) value = { a: value }
  return value
}

/** An object with own `__proto__` / `constructor` keys, as `JSON.parse` builds them. */
export const pollutingObject = (rng: Rng): unknown =>
  JSON.parse(
    rng.pick([
      `{"__proto__":{"polluted":true,"command":"echo pwned"}}`,
      `{"constructor":{"prototype":{"polluted":true}}}`,
      `{"__proto__":null,"toString":"x"}`,
      `{"prototype":{"polluted":true},"hasOwnProperty":1}`
    ])
  )

const hostileObject = (rng: Rng, depth: number): Record<string, unknown> =>
  Object.fromEntries(Array.from({ length: rng.int(4) }, () => [hostileString(rng).slice(0, 20), hostileValue(rng, depth)]))

/**
 * Arguments for `tool`: mostly a valid base with some fields replaced by hostile values, plus unknown
 * and prototype-polluting keys; sometimes not an object at all.
 */
export const fuzzArguments = (rng: Rng, base: Readonly<Record<string, unknown>>): unknown => {
  if (rng.chance(0.06)) return hostileValue(rng, 1)
  const args: Record<string, unknown> = rng.chance(0.1) ? (pollutingObject(rng) as Record<string, unknown>) : {}
  for (const [key, value] of Object.entries(base)) {
    if (rng.chance(0.12)) continue
    args[key] = rng.chance(0.3) ? hostileValue(rng) : value
  }
  if (rng.chance(0.3)) args[hostileString(rng).slice(0, 30)] = hostileValue(rng)
  if (rng.chance(0.15)) args[rng.pick(["env", "stdin", "stdoutMaxBytes", "sandbox_permissions", "justification"])] = hostileValue(rng)
  return args
}
