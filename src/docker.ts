/**
 * effect-bash/docker: the container executor and its engine port. A separate entry point so that `docker-modem` (an
 * optional peer) is needed only by those who run commands in containers.
 *
 * @since 0.1.0
 */
export * as DockerBashExecutor from "./layers/DockerBashExecutor.js"
export * as DockerContainerEngine from "./layers/DockerContainerEngine.js"
export {
  ContainerConflictError,
  ContainerEngine,
  ContainerEngineError,
  ContainerNotFoundError,
  EngineUnavailableError
} from "./services/ContainerEngine.js"
