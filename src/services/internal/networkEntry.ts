/**
 * One entry of a network allow-list or deny-list, as a request or a setting writes it: parsed, or
 * why it is none. Shared by the executors' policies and the tools that check a model's entries.
 *
 * @internal
 */
import * as NodeNet from "node:net"

/** One entry of an allow-list or deny-list: `example.com`, `*.example.com`, `10.0.0.5`, each with an optional `:443`. */
export interface Entry {
  /** As written, the key of `denyReasons`. */
  readonly text: string
  /** A lower-case name without a trailing dot, the suffix after `*.`, or a canonical IP literal. */
  readonly host: string
  readonly wildcard: boolean
  readonly ip: boolean
  readonly port: number | undefined
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

export const normalName = (name: string): string => name.toLowerCase().replace(/\.$/, "")

const isName = (name: string): boolean => name.length <= 253 && name.split(".").every((part) => label.test(part))

/** The host and port of `text`: `name`, `name:port`, `[v6]`, `[v6]:port`, or a bare IPv6 literal. */
const splitPort = (text: string): { readonly host: string; readonly port: string | undefined } => {
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text)
  if (bracketed !== null) return { host: bracketed[1]!, port: bracketed[2] }
  if (NodeNet.isIPv6(text)) return { host: text, port: undefined }
  const colon = text.lastIndexOf(":")
  return colon < 0 ? { host: text, port: undefined } : { host: text.slice(0, colon), port: text.slice(colon + 1) }
}

/** The parsed entry, or why it is not one. */
export const parseEntry = (text: string): Entry | string => {
  const { host, port } = splitPort(text.trim())
  const ip = NodeNet.isIP(host) !== 0
  const wildcard = !ip && host.startsWith("*.")
  const name = ip ? canonicalIp(host) : normalName(wildcard ? host.slice(2) : host)
  // A URL (`https://…`) splits into a name and a "port"; it is no entry at all.
  if (text.includes("/") || (!ip && (!isName(name) || (wildcard && !name.includes("."))))) {
    return `is not a host name, a *.domain wildcard or an IP literal, each with an optional :port`
  }
  const portNumber = port === undefined ? undefined : /^\d{1,5}$/.test(port) ? Number(port) : NaN
  if (portNumber !== undefined && !(portNumber >= 1 && portNumber <= 65535)) {
    return `has a bad port ${JSON.stringify(port)} (1–65535)`
  }
  return { text, host: name, wildcard, ip, port: portNumber }
}

/** An IP literal in one spelling: IPv4-mapped IPv6 as IPv4, IPv6 expanded by the URL parser. */
export const canonicalIp = (ip: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return mapped[1]!
  return NodeNet.isIPv6(ip) ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip
}

