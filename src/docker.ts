/**
 * effect-bash/docker: the container executor, its engine port and the service for its boxes' files. A separate entry point so that `docker-modem` (an
 * optional peer) is needed only by those who run commands in containers.
 *
 * @since 0.1.0
 */
export * as DockerBashExecutor from "./layers/DockerBashExecutor.js"
export * as DockerContainerEngine from "./layers/DockerContainerEngine.js"
export { BoxFileError, BoxFileNotFoundError, BoxFiles, BoxFileTooLargeError, defaultMaxBytes as boxFilesDefaultMaxBytes } from "./services/BoxFiles.js"
export {
  ArchiveTooLargeError,
  ContainerConflictError,
  ContainerEngine,
  ContainerEngineError,
  ContainerNotFoundError,
  EngineUnavailableError
} from "./services/ContainerEngine.js"
