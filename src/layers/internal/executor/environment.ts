/**
 * The child's environment: the host's minus credentials, stale managed names and inherited shell
 * state, then fixed non-interactive settings, then the caller's ordinary variables, then the
 * managed `DSH_*` ones.
 *
 * @internal
 */
import { BashRequestError } from "../../../services/BashExecutor.js"
import { isBashStartupState } from "../bashStartup.js"

/**
 * Names dropped from the inherited environment unless allow-listed: credential words anywhere
 * (`AUTH` except as part of `AUTHOR`, so `GIT_AUTHOR_NAME` and `XAUTHORITY` — a path, not a secret —
 * survive, while `SSH_AUTH_SOCK`, the user's SSH agent, does not), and credential suffixes
 * (`MYSQL_PWD`, `SMTP_PASS`, `GITLAB_PAT`, `CI_JOB_JWT`, `SENTRY_DSN`).
 */
const defaultDenyPattern = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|AUTH(?!OR)|_(?:PWD|PASS|PAT|JWT|DSN)$/i

/**
 * A URL with a password in its userinfo (`postgres://app:secret@db/x`, `http://u:p@proxy:3128`),
 * anywhere in a value. Each attempt stops at the end of one authority, so the scan stays linear.
 */
const urlWithPassword = /:\/\/[^/?#\s:@]*:[^/?#\s]+@/

/**
 * Output and pager settings that keep results readable for a model.
 */
const displayVariables: Readonly<Record<string, string>> = {
  NO_COLOR: "1",
  TERM: "dumb",
  PAGER: "cat",
  GIT_PAGER: "cat"
}

/**
 * Settings that make common tools fail fast instead of waiting for a human at a prompt.
 */
const nonInteractiveVariables: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  GIT_EDITOR: "true",
  EDITOR: "true",
  VISUAL: "true",
  DEBIAN_FRONTEND: "noninteractive",
  PIP_NO_INPUT: "1",
  SSH_ASKPASS_REQUIRE: "never"
}

const managedName = /^DSH_/

/**
 * The scrub: what is kept from the inherited environment.
 */
export interface EnvScrub {
  /** Names kept even when a deny pattern matches. */
  readonly allow: ReadonlyArray<string>
  /** Extra deny patterns (case-insensitive regular expressions), on top of the default. */
  readonly deny: ReadonlyArray<RegExp>
}

/**
 * Checks the caller's variables against the reserved managed namespace.
 */
export const validateEnv = (
  env: Readonly<Record<string, string>> | undefined,
  dshEnv: Readonly<Record<string, string>> | undefined
): BashRequestError | undefined => {
  for (const key of Object.keys(env ?? {})) {
    if (managedName.test(key)) {
      return new BashRequestError({
        field: "env",
        message: `ordinary bash env cannot set reserved variable "${key}"; use dshEnv`
      })
    }
  }
  for (const key of Object.keys(dshEnv ?? {})) {
    if (!managedName.test(key)) {
      return new BashRequestError({
        field: "dshEnv",
        message: `managed bash env cannot set ordinary variable "${key}"; use env`
      })
    }
  }
  return undefined
}

/**
 * Builds the child's environment. `inherited` is never modified. Inherited shell state a "no rc
 * files" shell must not import (`isBashStartupState`) is dropped even when allow-listed; a caller's
 * explicit `env` can still set it.
 */
export const buildEnv = (
  inherited: Readonly<Record<string, string | undefined>>,
  scrub: EnvScrub,
  env: Readonly<Record<string, string>> | undefined,
  dshEnv: Readonly<Record<string, string>> | undefined
): Record<string, string> => {
  const allowed = new Set(scrub.allow)
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(inherited)) {
    if (value === undefined || managedName.test(name) || isBashStartupState(name)) continue
    const denied = defaultDenyPattern.test(name) || urlWithPassword.test(value) ||
      scrub.deny.some((pattern) => pattern.test(name))
    if (denied && !allowed.has(name)) continue
    result[name] = value
  }
  return Object.assign(result, displayVariables, nonInteractiveVariables, env, dshEnv)
}

const sameEntries = (
  a: ReadonlyArray<readonly [string, string | undefined]>,
  b: ReadonlyArray<readonly [string, string | undefined]>
): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (a[i]![0] !== b[i]![0] || a[i]![1] !== b[i]![1]) return false
  }
  return true
}

const isEmpty = (record: Readonly<Record<string, string>> | undefined): boolean => {
  for (const _ in record) return false
  return true
}

const sameRecord = (
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined
): boolean => {
  if (a === b) return true
  let size = 0
  for (const name in a) {
    if (b === undefined || !(name in b) || b[name] !== a[name]) return false
    size++
  }
  for (const _ in b) size--
  return size === 0
}

/**
 * {@link buildEnv} for one scrub, with the scrubbed base (the inherited part and the fixed
 * settings) computed again only when the inherited names or values have changed since the last
 * call. A call without variables of its own gets the base; one with them gets the base merged with
 * them, the same object as the last call's while the base and the variables are the same (a
 * session's calls repeat theirs). Both are frozen: the spawner keys its own per-env work on them.
 */
export const makeEnvBuilder = (scrub: EnvScrub) => {
  let source: ReadonlyArray<readonly [string, string | undefined]> = []
  let base: Readonly<Record<string, string>> | undefined
  let merged: {
    readonly base: Readonly<Record<string, string>>
    readonly env: Readonly<Record<string, string>> | undefined
    readonly dshEnv: Readonly<Record<string, string>> | undefined
    readonly result: Readonly<Record<string, string>>
  } | undefined
  return (
    inherited: Readonly<Record<string, string | undefined>>,
    env: Readonly<Record<string, string>> | undefined,
    dshEnv: Readonly<Record<string, string>> | undefined
  ): Readonly<Record<string, string>> => {
    const entries = Object.entries(inherited)
    if (base === undefined || !sameEntries(entries, source)) {
      source = entries
      base = Object.freeze(buildEnv(Object.fromEntries(entries), scrub, undefined, undefined))
    }
    if (isEmpty(env) && isEmpty(dshEnv)) return base
    if (merged === undefined || merged.base !== base || !sameRecord(env, merged.env) || !sameRecord(dshEnv, merged.dshEnv)) {
      // Copies: a caller may change its records after the call.
      merged = {
        base,
        env: { ...env },
        dshEnv: { ...dshEnv },
        result: Object.freeze(Object.assign({}, base, env, dshEnv))
      }
    }
    return merged.result
  }
}
