/**
 * The decision the proxies make for each connection: the lists first, then one resolution whose
 * address is the one connected to (no second lookup a DNS answer could change), checked against the
 * denied addresses.
 *
 * @internal
 */
import * as NodeDns from "node:dns"
import * as NodeNet from "node:net"
import type { Policy } from "./allowList.js"
import { explicitlyAllowedIp, isDeniedAddress, normalHost, refusalOf } from "./allowList.js"

/** Resolves a name to the address the proxy connects to. */
export type Resolver = (name: string) => Promise<string>

/** The system's resolver: the first address `getaddrinfo` gives. */
export const systemResolver: Resolver = (name) => NodeDns.promises.lookup(name).then((found) => found.address)

/** Where to connect, or why not: `refusal` is the model's line without its brackets. */
export type Admission =
  | { readonly _tag: "Admitted"; readonly address: string }
  | { readonly _tag: "Refused"; readonly refusal: string }

/** The exact text of one refused connection, as the call's result shows it. */
export const refusalLine = (refusal: string): string => `[network: refused ${refusal}]`

/** The reasons the proxies give besides the lists' own. */
export const reasons = {
  unresolved: "could not be resolved",
  deniedAddress: "resolves to a denied address",
  busy: "too many open connections"
} as const

/** The admission of `host:port` under `policy`. */
export const admit = async (
  policy: Policy,
  denied: NodeNet.BlockList,
  resolve: Resolver,
  requested: string,
  port: number
): Promise<Admission> => {
  const host = normalHost(requested)
  const refuse = (reason: string): Admission => ({ _tag: "Refused", refusal: `${host}:${port} — ${reason}` })
  const listed = refusalOf(policy, host, port)
  if (listed !== undefined) return refuse(listed)
  // An IP literal passes the lists only through an entry naming it: the configurer chose that address.
  if (NodeNet.isIP(host) !== 0 && explicitlyAllowedIp(policy, host)) return { _tag: "Admitted", address: host }
  const pinned = policy.hosts.get(host)
  if (pinned !== undefined) return { _tag: "Admitted", address: pinned }
  let address: string
  try {
    address = await resolve(host)
  } catch {
    return refuse(reasons.unresolved)
  }
  if (NodeNet.isIP(address) === 0) return refuse(reasons.unresolved)
  return isDeniedAddress(denied, address) ? refuse(reasons.deniedAddress) : { _tag: "Admitted", address }
}
