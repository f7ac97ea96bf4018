/**
 * A Docker Engine of a test's own, which the test may kill with SIGKILL and start again, or stop and
 * resume (SIGSTOP, SIGCONT): never the shared engines. It has its own TCP port on loopback, data root,
 * exec root and pidfile (both on disk, so a restart finds the containerd and the containers the
 * killed one left), and a bridge of its own (`--bridge=none` would make it delete the host engine's
 * docker0). `stop` ends it with SIGTERM (it stops its containers and its containerd) and removes all
 * of it.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as net from "node:net"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" }, () => socket.end("GET /_ping HTTP/1.0\r\n\r\n"))
    let reply = ""
    socket.on("data", (chunk) => (reply += chunk.toString()))
    socket.on("close", () => resolve(reply.startsWith("HTTP/1.0 200") || reply.startsWith("HTTP/1.1 200")))
    socket.on("error", () => resolve(false))
    socket.setTimeout(2_000, () => socket.destroy())
  })

const waitUntil = async (condition: () => Promise<boolean>, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`${what} within ${timeoutMs} ms`)
}

const argsOf = (pid: string): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")
  } catch {
    return ""
  }
}

const childrenOf = (pid: string): ReadonlyArray<string> =>
  fs.readdirSync("/proc").filter((other) => {
    try {
      return /^\d+$/.test(other) && fs.readFileSync(`/proc/${other}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1] === pid
    } catch {
      return false
    }
  })

const signal = (pid: string) => {
  try {
    process.kill(Number(pid), "SIGKILL")
  } catch {
    // Gone meanwhile.
  }
}

/** Starts the engine, tagged `tag` (a few letters: it names its bridge), and loads `image` into it. */
export const startOwnDockerd = async (tag: string, image: string) => {
  const port = await freePort()
  const root = `/var/lib/effect-bash-test-${tag}-${process.pid}`
  const bridge = `ebt${tag}${process.pid}`.slice(0, 15)
  const address = `tcp://127.0.0.1:${port}`
  fs.mkdirSync(`${root}/exec`, { recursive: true })
  execFileSync("ip", ["link", "add", bridge, "type", "bridge"])
  execFileSync("ip", ["addr", "add", `10.${214 + (process.pid % 30)}.${process.pid % 250}.1/24`, "dev", bridge])
  execFileSync("ip", ["link", "set", bridge, "up"])
  let daemon: ChildProcess | undefined
  const log = fs.openSync(`${root}/dockerd.log`, "a")

  /** The runtime shims of this engine's boxes (their arguments name its exec root), with each box's init. */
  const killShims = () => {
    const shims = fs.readdirSync("/proc").filter((pid) => /^\d+$/.test(pid) && argsOf(pid).startsWith("/usr/bin/containerd-shim") && argsOf(pid).includes(`${root}/exec/`))
    for (const shim of shims) {
      for (const child of childrenOf(shim)) signal(child)
      signal(shim)
    }
  }

  const start = async () => {
    daemon = spawn("dockerd", [
      "--data-root", `${root}/data`, "--exec-root", `${root}/exec`, "--pidfile", `${root}/exec/docker.pid`,
      "-H", address, `--bridge=${bridge}`, "--iptables=false", "--ip-masq=false", "--userland-proxy=false"
    ], { stdio: ["ignore", log, log], detached: true })
    await waitUntil(() => answers(port), 60_000, `the test's dockerd did not answer on ${address}`)
  }
  await start()
  execFileSync("bash", ["-c", `docker -H unix:///var/run/docker.sock save "$1" | docker -H "$2" load >/dev/null`, "load", image, address])

  return {
    address,
    /**
     * The engine dies at once with SIGKILL, and so do its containers (their runtime shims, found by
     * this engine's exec root in their arguments, and each box's init, which takes its pid namespace
     * with it), as on a crash of the engine's machine; its data root stays, as a disk does.
     */
    kill: async () => {
      const killed = daemon!
      const containerd = childrenOf(String(killed.pid))
      killed.kill("SIGKILL")
      if (killed.exitCode === null && killed.signalCode === null) await once(killed, "exit")
      for (const pid of containerd) signal(pid)
      killShims()
      await waitUntil(async () => containerd.every((pid) => !fs.existsSync(`/proc/${pid}/cmdline`) || argsOf(pid) === ""), 10_000, "containerd did not end")
      // Its pid may stay a zombie a while (init reaps it), which the next dockerd would take for a live containerd.
      fs.rmSync(`${root}/exec/containerd/containerd.pid`, { force: true })
    },
    /** Starts the engine again, on the same data and exec roots. */
    restart: start,
    /**
     * The engine stops answering (SIGSTOP), as a hung daemon does: requests wait unanswered and no
     * exec's output comes through; its containers run on.
     */
    freeze: () => void daemon!.kill("SIGSTOP"),
    /** The engine answers again (SIGCONT). */
    thaw: () => void daemon!.kill("SIGCONT"),
    /** Ends the engine with SIGTERM (a frozen one is resumed first) and removes its roots and bridge. */
    stop: async () => {
      const running = daemon
      if (running !== undefined && running.exitCode === null && running.signalCode === null) {
        running.kill("SIGCONT")
        running.kill("SIGTERM")
        await once(running, "exit")
      }
      killShims()
      // What a killed engine left mounted (its root's own bind, its boxes' file systems and network namespaces).
      const mounts = fs.readFileSync("/proc/self/mounts", "utf8").split("\n").map((line) => line.split(" ")[1] ?? "")
        .filter((point) => point === root || point.startsWith(`${root}/`)).sort((a, b) => b.length - a.length)
      for (const point of mounts) execFileSync("umount", ["-l", point])
      fs.closeSync(log)
      try {
        execFileSync("ip", ["link", "del", bridge])
      } catch {
        // Gone already.
      }
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
