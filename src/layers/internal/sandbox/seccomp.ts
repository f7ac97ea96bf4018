/**
 * The seccomp filter a `network: "none"` sandbox hands bubblewrap (`--seccomp FD`): a classic BPF
 * program that makes `socket(AF_UNIX, …)` fail with `EPERM`, so a command cannot connect to a host
 * service listening on a path (`docker.sock`, an ssh-agent, a D-Bus) through the shared filesystem.
 * The network namespace already cuts TCP, UDP and abstract unix sockets. `socketpair` stays allowed:
 * its two ends reach nothing outside. `io_uring_setup` fails too, since io_uring can create sockets
 * without the `socket` system call. seccomp sees numbers, never paths: it is all unix sockets or none.
 *
 * @internal
 */
import * as NodeOs from "node:os"

// Classic BPF opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20 // A = 32-bit word at offset k of struct seccomp_data
const JEQ_K = 0x15 // pc += A === k ? jt : jf
const JSET_K = 0x45 // pc += (A & k) !== 0 ? jt : jf
const RET_K = 0x06 // return k

// Return values (linux/seccomp.h); the low 16 bits of RET_ERRNO are the errno.
const RET_KILL_PROCESS = 0x80000000
const RET_ERRNO = 0x00050000
const RET_ALLOW = 0x7fff0000
const EPERM = 1

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const NR = 0
const ARCH = 4
/** The low 32 bits of args[0] on a little-endian host; `socket`'s domain is an `int`. */
const ARG0 = 16

const AUDIT_ARCH_X86_64 = 0xc000003e
const AUDIT_ARCH_AARCH64 = 0xc00000b7
/** x86_64 system calls of the x32 ABI carry this bit; that ABI has its own numbers. */
const X32_SYSCALL_BIT = 0x40000000
const AF_UNIX = 1

const SYS_SOCKET_X86_64 = 41
const SYS_SOCKET_AARCH64 = 198
/** The same number on both architectures (the unified table of newer system calls). */
const SYS_IO_URING_SETUP = 425

type Instruction =
  | { readonly op: number; readonly k: number }
  | { readonly op: number; readonly k: number; readonly jt: string; readonly jf: string }
  | { readonly label: string }

const load = (offset: number): Instruction => ({ op: LD_W_ABS, k: offset })
const ret = (k: number): Instruction => ({ op: RET_K, k })
const jump = (op: number, k: number, jt: string, jf: string): Instruction => ({ op, k, jt, jf })
const label = (name: string): Instruction => ({ label: name })

// Labels name the instruction that follows them; `next` is the following instruction.
const program: ReadonlyArray<Instruction> = [
  load(ARCH),
  jump(JEQ_K, AUDIT_ARCH_X86_64, "x86_64", "next"),
  jump(JEQ_K, AUDIT_ARCH_AARCH64, "aarch64", "next"),
  // Any other ABI (i386 through int 0x80, 32-bit arm, …) has other numbers and `socketcall`,
  // whose arguments a filter cannot read: fail closed.
  ret(RET_KILL_PROCESS),
  label("x86_64"),
  load(NR),
  jump(JSET_K, X32_SYSCALL_BIT, "kill", "next"),
  jump(JEQ_K, SYS_SOCKET_X86_64, "domain", "next"),
  jump(JEQ_K, SYS_IO_URING_SETUP, "deny", "allow"),
  label("aarch64"),
  load(NR),
  jump(JEQ_K, SYS_SOCKET_AARCH64, "domain", "next"),
  jump(JEQ_K, SYS_IO_URING_SETUP, "deny", "allow"),
  label("domain"),
  load(ARG0),
  jump(JEQ_K, AF_UNIX, "deny", "allow"),
  label("allow"),
  ret(RET_ALLOW),
  label("deny"),
  ret(RET_ERRNO | EPERM),
  label("kill"),
  ret(RET_KILL_PROCESS)
]

/**
 * The program as `struct sock_filter` entries (u16 code, u8 jt, u8 jf, u32 k), in the host's byte
 * order, which the supported hosts share (little-endian). Jumps only go forward, by offset.
 */
const assemble = (instructions: ReadonlyArray<Instruction>): Uint8Array => {
  const code = instructions.filter((each) => !("label" in each))
  const targets = new Map<string, number>()
  let index = 0
  for (const each of instructions) {
    if ("label" in each) targets.set(each.label, index)
    else index++
  }
  const bytes = new Uint8Array(code.length * 8)
  const view = new DataView(bytes.buffer)
  code.forEach((each, at) => {
    const offset = (name: string) => {
      const target = name === "next" ? at + 1 : targets.get(name)
      if (target === undefined || target <= at || target - at - 1 > 255) throw new Error(`bad jump to ${name}`)
      return target - at - 1
    }
    if ("label" in each) return
    view.setUint16(at * 8, each.op, true)
    view.setUint8(at * 8 + 2, "jt" in each ? offset(each.jt) : 0)
    view.setUint8(at * 8 + 3, "jt" in each ? offset(each.jf) : 0)
    view.setUint32(at * 8 + 4, each.k, true)
  })
  return bytes
}

/**
 * Whether this host can run the filter: x86_64 or aarch64, little-endian (the byte order the
 * program is written in).
 */
export const unixSocketFilterSupported = (arch: string = process.arch): boolean =>
  (arch === "x64" || arch === "arm64") && NodeOs.endianness() === "LE"

/**
 * The filter's bytes, for bubblewrap's `--seccomp FD`.
 */
export const unixSocketFilter: Uint8Array = assemble(program)
