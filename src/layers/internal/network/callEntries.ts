/**
 * A call's own allow entries (`networkAllow`, or a sandbox's `sandboxPolicy.networkAllow`), checked
 * as the call starts: only an executor with an allow-list takes them, and a bad one fails the call
 * naming it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { BashRequestError } from "../../../services/BashExecutor.js"
import type { Entry } from "./allowList.js"
import { parseEntry } from "./allowList.js"

/** Why `field` cannot be taken: the executor has no allow-listed network. */
export const unproxiedMessage = (field: string): string =>
  `${field} needs ${field.startsWith("sandboxPolicy.") ? "a sandbox" : "an executor"} with network: { allow }`

/** The entries of `field` (`texts`), parsed; `proxied` says whether the executor has an allow-list. */
export const callEntries = (field: string, texts: ReadonlyArray<string> | undefined, proxied: boolean) =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<Entry>, BashRequestError> => {
    if (texts === undefined || texts.length === 0) return Effect.succeed([])
    if (!proxied) {
      return Effect.fail(new BashRequestError({ field, message: unproxiedMessage(field) }))
    }
    const entries: Array<Entry> = []
    for (const [index, text] of texts.entries()) {
      const entry = parseEntry(text)
      if (typeof entry === "string") {
        return Effect.fail(new BashRequestError({ field, message: `${field} entry ${index} ${JSON.stringify(text)} ${entry}` }))
      }
      entries.push(entry)
    }
    return Effect.succeed(entries)
  })

/** A call's entries from both fields a request may give them in. */
export const allCallEntries = (
  spec: { readonly networkAllow?: ReadonlyArray<string> | undefined; readonly sandboxPolicy?: { readonly networkAllow?: ReadonlyArray<string> | undefined } | undefined },
  proxied: boolean
) =>
  Effect.map(
    Effect.all([
      callEntries("sandboxPolicy.networkAllow", spec.sandboxPolicy?.networkAllow, proxied),
      callEntries("networkAllow", spec.networkAllow, proxied)
    ]),
    ([policy, own]) => [...policy, ...own]
  )
