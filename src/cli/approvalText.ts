/**
 * What a human reads of an escalation request. The command and the justification come from the
 * model: control characters, line and paragraph separators and bidirectional overrides are shown
 * escaped, so neither can rewrite or hide the rest of the question on a terminal or in a client.
 */

const hidden = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const named: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * `text` with every character that could hide or rewrite a line escaped (`\n`, `\u001b`, …).
 */
export const shownToUser = (text: string): string =>
  text.replace(hidden, (char) => named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
