/**
 * TLS to a Docker Engine on TCP, as the docker CLI sets it up: `DOCKER_TLS_VERIFY` (any non-empty
 * value) asks for it, and `DOCKER_CERT_PATH` (else `~/.docker`) holds the CA that signed the engine's
 * certificate (`ca.pem`) and the client's certificate and key (`cert.pem`, `key.pem`), which an
 * engine started with `--tlsverify` requires.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** What a TLS connection to the engine presents and trusts. */
export interface EngineTls {
  readonly ca: Buffer
  readonly cert: Buffer
  readonly key: Buffer
}

/** Whether the environment asks for TLS, as the docker CLI reads it. */
export const tlsRequested = (): boolean => (process.env.DOCKER_TLS_VERIFY ?? "") !== ""

/**
 * The certificates `DOCKER_CERT_PATH` (else `~/.docker`) holds, or what is missing, as a sentence that
 * names the file and the variables.
 */
export const readEngineTls = (): EngineTls | string => {
  const directory = process.env.DOCKER_CERT_PATH || NodePath.join(NodeOs.homedir(), ".docker")
  const read = (name: string) => NodeFs.readFileSync(NodePath.join(directory, name))
  try {
    return { ca: read("ca.pem"), cert: read("cert.pem"), key: read("key.pem") }
  } catch (error) {
    const code = (error as { code?: string }).code ?? String(error)
    const path = (error as { path?: string }).path ?? directory
    return `DOCKER_TLS_VERIFY is set, but ${path} cannot be read (${code}): ` +
      "set DOCKER_CERT_PATH to the directory with the engine's CA (ca.pem) and the client's certificate and key (cert.pem, key.pem)"
  }
}

/** The error codes of a TLS handshake that failed: a certificate refused on either side. */
export const isTlsFailure = (code: string): boolean =>
  code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || code.includes("CERT") || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
  code === "EPROTO"
