/**
 * The rules a contributor must satisfy to be registered, checked in a fixed order,
 * each failure carrying its exact text.
 *
 * @internal
 */
import type { BashEnvRegistry } from "../../../services/BashEnvRegistry.js"

/**
 * Keys the harness sets itself; no contributor may own them.
 */
const reservedKeys: ReadonlySet<string> = new Set(["DSH_HOME", "DSH_SHELL", "DSH_SESSION_ID"])

const validKey = /^DSH_[A-Z][A-Z0-9_]*$/

/**
 * Why `contributor` cannot join a registry whose current contributors are `registered` and whose
 * keys are owned as in `owners` (key → contributor name); `undefined` when it can.
 */
export const registrationProblem = (
  contributor: BashEnvRegistry.Contributor,
  registered: ReadonlyMap<string, unknown>,
  owners: ReadonlyMap<string, string>
): string | undefined => {
  const name = contributor.name
  if (typeof name !== "string" || name.trim() === "") return "bash env contributor name must be non-empty"
  if (registered.has(name)) return `bash env contributor "${name}" is already registered`
  // Keys declared earlier in this same contributor count as owned, so a repeated key is refused too.
  const claimed = new Map(owners)
  for (const { description, key } of contributor.keys) {
    if (!validKey.test(key)) return `bash env contributor "${name}" declared invalid key "${key}"`
    if (reservedKeys.has(key)) return `bash env contributor "${name}" cannot own reserved key "${key}"`
    if (typeof description !== "string" || description.trim() === "") return `bash env contributor "${name}" must describe "${key}"`
    const owner = claimed.get(key)
    if (owner !== undefined) {
      return `bash env key "${key}" is already owned by contributor "${owner}"; contributor "${name}" cannot also own it`
    }
    claimed.set(key, name)
  }
  return undefined
}
