/**
 * The reference's packages await `Promise.withResolvers` (Node 22); on Node 20 the bench supplies it.
 */
const withResolvers = <T>() => {
  let resolve!: (value: T) => void
  let reject!: (reason?: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export const supplyPromiseWithResolvers = (): void => {
  const promiseStatics = Promise as unknown as { withResolvers?: typeof withResolvers }
  promiseStatics.withResolvers ??= withResolvers
}
