/**
 * Status and marker lines after a model-facing body.
 */

/**
 * Appends `lines`, each on its own line, after `body`, starting a new line first when a non-empty
 * body does not end in one; no lines leave the body as it is.
 */
export const appendLines = (body: string, lines: ReadonlyArray<string>): string =>
  lines.length === 0 ? body : `${body}${body === "" || body.endsWith("\n") ? "" : "\n"}${lines.join("\n")}`
