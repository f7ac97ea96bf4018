/**
 * The network policy of a sandbox with an allow-list: which names a command may reach, checked by
 * the proxies for each connection, and which addresses a name may not resolve to.
 *
 * @internal
 */
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import type { Entry } from "../../../services/internal/networkEntry.js"
import { canonicalIp, normalName } from "../../../services/internal/networkEntry.js"

export type { Entry } from "../../../services/internal/networkEntry.js"
export { canonicalIp, parseEntry } from "../../../services/internal/networkEntry.js"

/** A checked policy. */
export interface Policy {
  readonly allow: ReadonlyArray<Entry>
  readonly deny: ReadonlyArray<Entry>
  readonly denyReasons: Readonly<Record<string, string>>
  /** Names the configurer pinned to an address: used instead of the resolver and trusted like an allowed IP literal. */
  readonly hosts: ReadonlyMap<string, string>
}

/** A name as a connection names it: lower case, no trailing dot, IP literals canonical. */
export const normalHost = (name: string): string => {
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name
  return NodeNet.isIP(bare) !== 0 ? canonicalIp(bare) : normalName(bare)
}

const matches = (entry: Entry, host: string, port: number): boolean =>
  (entry.port === undefined || entry.port === port) &&
  (entry.wildcard ? host.endsWith(`.${entry.host}`) : entry.host === host)

/** Why a connection to `host:port` is refused before resolving it, or `undefined` when the lists admit it. */
export const refusalOf = (policy: Policy, host: string, port: number): string | undefined => {
  const denied = policy.deny.find((entry) => matches(entry, host, port))
  if (denied !== undefined) return policy.denyReasons[denied.text] ?? "on the deny-list"
  return policy.allow.some((entry) => matches(entry, host, port)) ? undefined : "not in the allow-list"
}

/** Whether `host` is an IP literal the allow-list names itself, so its address is the configurer's choice. */
export const explicitlyAllowedIp = (policy: Policy, host: string): boolean =>
  policy.allow.some((entry) => entry.ip && entry.host === host)

/**
 * The addresses no allowed name may resolve to: the host itself and its own interfaces, private
 * networks (a name on the list must not become a way into the host's LAN or a cloud's metadata
 * service), link-local, carrier-grade NAT, multicast and the unspecified addresses.
 */
export const deniedAddresses = (): NodeNet.BlockList => {
  const list = new NodeNet.BlockList()
  const v4: ReadonlyArray<readonly [string, number]> = [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 3]
  ]
  for (const [network, prefix] of v4) list.addSubnet(network, prefix, "ipv4")
  const v6: ReadonlyArray<readonly [string, number]> = [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8]
  ]
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, "ipv6")
  for (const addresses of Object.values(NodeOs.networkInterfaces())) {
    for (const each of addresses ?? []) list.addAddress(each.address, each.family === "IPv6" ? "ipv6" : "ipv4")
  }
  return list
}

/** Whether `address` (an IP literal) is in `list`; IPv4-mapped IPv6 is checked as IPv4. */
export const isDeniedAddress = (list: NodeNet.BlockList, address: string): boolean => {
  const ip = canonicalIp(address)
  return list.check(ip, NodeNet.isIPv6(ip) ? "ipv6" : "ipv4")
}
