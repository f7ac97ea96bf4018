/**
 * The message of a failure as the CLI reports it (after `effect-bash: `): an error's `message`, or the
 * value itself.
 */
export const errorMessage = (error: unknown): string =>
  error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
