/**
 * The container executor against a Docker Engine reached over ssh (`dockerHost: "ssh://user@host"`),
 * as a remote engine is: this machine's engine behind a local sshd, which runs the remote end
 * (`docker system dial-stdio`), and an ssh-agent holding the only key it accepts. What ran, and what
 * is left, is checked with the docker CLI.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import * as DockerBashExecutor from "../../src/layers/DockerBashExecutor.js"
import { BashExecutor } from "../../src/services/BashExecutor.js"
import { containersWith, dockerUnavailable, testImage } from "../support/docker.js"
import { withHostEnv } from "../support/hostEnv.js"
import { pollUntil } from "../support/poll.js"
import { killAndAwait } from "../support/processes.js"

const sshd = "/usr/sbin/sshd"
const onPath = (name: string) =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && fs.existsSync(path.join(dir, name)))
const unavailable = dockerUnavailable ??
  (!fs.existsSync(sshd) || !onPath("ssh-agent") || !onPath("ssh-keygen") ? "no sshd, ssh-agent or ssh-keygen (openssh-server, openssh-client)"
    : process.getuid?.() !== 0 ? "sshd runs as root here"
    : undefined)

/** A free port on the loopback (free when asked; sshd takes it right after). */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

/** A child process of the test that is killed, and awaited, with the scope. */
const daemon = (file: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(file, args, { stdio: "ignore" })),
    (child) =>
      Effect.promise(() => killAndAwait(child))
  )

/** sshd on a loopback port accepting one fresh key for this user, and an ssh-agent holding it. */
const sshToThisMachine = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "effect-bash-ssh-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  for (const key of ["host", "user"]) execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, key)])
  fs.copyFileSync(path.join(dir, "user.pub"), path.join(dir, "authorized_keys"))
  const port = yield* freePort
  fs.writeFileSync(
    path.join(dir, "sshd_config"),
    [
      `ListenAddress 127.0.0.1:${port}`,
      `HostKey ${path.join(dir, "host")}`,
      `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
      `PidFile ${path.join(dir, "sshd.pid")}`,
      // The key lives under the world-writable temporary directory.
      "StrictModes no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin prohibit-password",
      "UsePAM no"
    ].join("\n") + "\n"
  )
  // Privilege separation needs its directory; a machine without a running sshd may lack it.
  fs.mkdirSync("/run/sshd", { recursive: true, mode: 0o755 })
  yield* daemon(sshd, ["-D", "-e", "-f", path.join(dir, "sshd_config")])
  const agentSocket = path.join(dir, "agent.sock")
  yield* daemon("ssh-agent", ["-D", "-a", agentSocket])
  const ready = yield* Effect.promise(() =>
    pollUntil(() => fs.existsSync(agentSocket) && canConnect(port), (up) => up, 10_000)
  )
  if (!ready) return yield* Effect.die(new Error("sshd or ssh-agent did not start within 10 s"))
  execFileSync("ssh-add", ["-q", path.join(dir, "user")], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket } })
  return { address: `ssh://${os.userInfo().username}@127.0.0.1:${port}`, agentSocket }
})

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

describe.skipIf(unavailable !== undefined)("DockerBashExecutor over ssh", () => {
  it.scopedLive("an engine named ssh://user@host, authenticated by the user's ssh-agent, runs commands with their input, output and exit code", () =>
    Effect.gen(function*() {
      const ssh = yield* sshToThisMachine
      const session = `container-ssh-test-${process.pid}`
      const workspace = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "effect-bash-ssh-ws-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const layer = DockerBashExecutor.layer({ image: testImage, cwd: workspace, dockerHost: ssh.address })
      const result = yield* Effect.gen(function*() {
        const bash = yield* BashExecutor
        const ran = yield* bash.run(yield* bash.resolve({
          command: "cat; echo to stderr >&2; exit 3",
          stdin: "input over ssh\n",
          dshEnv: { DSH_SESSION_ID: session }
        }))
        // The session's container is on this machine's engine while the layer lives.
        expect(containersWith({ "effect-bash.session": session })).toHaveLength(1)
        return ran
      }).pipe(Effect.provide(layer), Effect.scoped, withHostEnv({ SSH_AUTH_SOCK: ssh.agentSocket }))
      expect({ stdout: result.stdout.text, stderr: result.stderr.text, exitCode: result.exitCode }).toEqual({
        stdout: "input over ssh\n",
        stderr: "to stderr\n",
        exitCode: 3
      })
      expect(containersWith({ "effect-bash.session": session })).toEqual([])
    }).pipe(Effect.timeout(120_000)), { timeout: 150_000 })
})
