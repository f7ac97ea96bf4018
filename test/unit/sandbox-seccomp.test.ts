/**
 * The `network: "none"` seccomp filter, run by a small classic-BPF interpreter over `seccomp_data`
 * for each architecture — the live test reaches only the host's own. The interpreter knows the
 * opcodes a seccomp filter may use here and fails on any other.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { resolveSandboxConfig } from "../../src/layers/sandboxSettings.js"
import { unixSocketFilter, unixSocketFilterSupported } from "../../src/layers/internal/sandbox/seccomp.js"

const X86_64 = 0xc000003e
const AARCH64 = 0xc00000b7
const I386 = 0x40000003
const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const KILL_PROCESS = 0x80000000

/** The filter's verdict for a system call `nr` of `arch` whose first argument is `arg0`. */
const verdict = (arch: number, nr: number, arg0 = 0): number => {
  const data = new DataView(new ArrayBuffer(64))
  data.setInt32(0, nr, true)
  data.setUint32(4, arch, true)
  data.setUint32(16, arg0, true)
  const program = new DataView(unixSocketFilter.buffer, unixSocketFilter.byteOffset, unixSocketFilter.byteLength)
  let a = 0
  for (let pc = 0; pc * 8 < program.byteLength;) {
    const code = program.getUint16(pc * 8, true)
    const jt = program.getUint8(pc * 8 + 2)
    const jf = program.getUint8(pc * 8 + 3)
    const k = program.getUint32(pc * 8 + 4, true)
    pc++
    switch (code) {
      case 0x20:
        a = data.getUint32(k, true)
        break
      case 0x15:
        pc += a === k ? jt : jf
        break
      case 0x45:
        pc += (a & k) !== 0 ? jt : jf
        break
      case 0x06:
        return k
      default:
        throw new Error(`unexpected opcode ${code}`)
    }
  }
  throw new Error("the program ran off its end")
}

describe("the unix-socket seccomp filter", () => {
  it("refuses socket(AF_UNIX) with EPERM and allows other families, on x86_64 and aarch64", () => {
    for (const [arch, socket] of [[X86_64, 41], [AARCH64, 198]] as const) {
      expect([arch, verdict(arch, socket, 1)]).toEqual([arch, EPERM])
      expect([arch, verdict(arch, socket, 2), verdict(arch, socket, 10), verdict(arch, socket, 16)])
        .toEqual([arch, ALLOW, ALLOW, ALLOW])
    }
  })

  it("refuses io_uring_setup, and allows socketpair and ordinary calls", () => {
    expect([verdict(X86_64, 425), verdict(AARCH64, 425)]).toEqual([EPERM, EPERM])
    // socketpair(AF_UNIX, …): x86_64 53, aarch64 199; read: 0 and 63.
    expect([verdict(X86_64, 53, 1), verdict(AARCH64, 199, 1), verdict(X86_64, 0), verdict(AARCH64, 63)])
      .toEqual([ALLOW, ALLOW, ALLOW, ALLOW])
    // aarch64's socket number is another call on x86_64 (and the reverse): only the arch's own counts.
    expect([verdict(X86_64, 198, 1), verdict(AARCH64, 41, 1)]).toEqual([ALLOW, ALLOW])
  })

  it("kills a process that uses another ABI: i386, x32, an unknown arch", () => {
    expect(verdict(I386, 359, 1)).toBe(KILL_PROCESS)
    expect(verdict(I386, 102, 1)).toBe(KILL_PROCESS)
    expect(verdict(X86_64, 0x40000000 | 41, 1)).toBe(KILL_PROCESS)
    expect(verdict(0x12345678, 0)).toBe(KILL_PROCESS)
  })

  it("is offered on x86_64 and aarch64 hosts only", () => {
    expect(["x64", "arm64", "riscv64", "ia32", "ppc64"].map((arch) => unixSocketFilterSupported(arch)))
      .toEqual([true, true, false, false, false])
  })

  it.effect("network none on another host fails the settings, naming allowUnixSockets; allowing them passes", () => {
    const arch = Object.getOwnPropertyDescriptor(process, "arch")!
    return Effect.gen(function*() {
      Object.defineProperty(process, "arch", { ...arch, value: "riscv64" })
      const error = yield* Effect.flip(resolveSandboxConfig({ network: "none" }))
      expect(error).toMatchObject({ field: "allowUnixSockets" })
      expect(error.message).toContain("bash-sandbox: allowUnixSockets: network \"none\" refuses unix sockets")
      expect(error.message).toContain("(riscv64)")
      const allowed = yield* resolveSandboxConfig({ network: "none", allowUnixSockets: true })
      expect(allowed.allowUnixSockets).toBe(true)
      yield* resolveSandboxConfig({ network: "host" })
    }).pipe(Effect.ensuring(Effect.sync(() => Object.defineProperty(process, "arch", arch))))
  })
})
