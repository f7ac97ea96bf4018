/**
 * The {@link ContainerEngine} port on the Docker Engine API (Docker, or Podman's API socket), through
 * docker-modem: it reads `DOCKER_HOST` (unix, tcp, TLS with `DOCKER_CERT_PATH`, ssh) the way the
 * docker CLI does.
 *
 * @since 0.2.0
 */
import type * as Scope from "effect/Scope"
import * as Layer from "effect/Layer"
import type * as Effect from "effect/Effect"
import { ContainerEngine } from "../services/ContainerEngine.js"
import { makeDockerEngine } from "./internal/container/DockerEngine.js"

/**
 * The engine at `address` (`unix:///path`, `tcp://host:port`, `ssh://user@host`), else at
 * `DOCKER_HOST`, else the default socket. Its connections close with the scope. It is not pinged:
 * an unreachable engine fails the first operation with `EngineUnavailable`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (address?: string): Effect.Effect<ContainerEngine.Service, ContainerEngine.Error, Scope.Scope> =>
  makeDockerEngine(address)

/**
 * The engine as a layer.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (address?: string): Layer.Layer<ContainerEngine, ContainerEngine.Error> =>
  Layer.scoped(ContainerEngine, make(address))
