/**
 * effect-bash/docker: the container executor. A separate entry point so that `docker-modem` (an
 * optional peer) is needed only by those who run commands in containers.
 *
 * @since 0.1.0
 */
export * as DockerBashExecutor from "./layers/DockerBashExecutor.js"
