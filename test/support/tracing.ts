/**
 * A tracer that records every span it makes (through Effect's built-in tracer).
 */
import { Effect, Tracer } from "effect"

export const recordingTracer = () => {
  const builtIn = Effect.runSync(Effect.tracer)
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = builtIn.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => builtIn.context(f, fiber)
  })
  return { tracer, spans }
}
