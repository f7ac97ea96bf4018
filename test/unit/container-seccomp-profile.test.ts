/**
 * The seccomp profile a box runs under: which rules each setting adds (the real engine applies it in
 * test/process/container-security.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { seccompProfile } from "../../src/layers/internal/container/seccompProfile.js"

type Rule = { readonly names: ReadonlyArray<string>; readonly errnoRet?: number; readonly args?: ReadonlyArray<{ readonly index: number; readonly value: number }> }
const rulesOf = (options: Parameters<typeof seccompProfile>[0]) =>
  (JSON.parse(seccompProfile(options)) as { readonly syscalls: ReadonlyArray<Rule> }).syscalls
const named = (rules: ReadonlyArray<Rule>, name: string) => rules.filter((rule) => rule.names.includes(name))

describe("a box's seccomp profile", () => {
  it("refuses unix sockets only without a network, and set-id modes only when not root on request", () => {
    const none = rulesOf({ blockUnixSockets: true, blockSetId: true })
    expect(named(none, "socket")).toEqual([{ names: ["socket"], action: "SCMP_ACT_ERRNO", errnoRet: 1, args: [{ index: 0, value: 1, valueTwo: 0, op: "SCMP_CMP_EQ" }] }])
    expect(named(rulesOf({ blockUnixSockets: false, blockSetId: true }), "socket")).toEqual([])
    for (const call of ["chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod", "mknodat", "open", "openat"]) {
      expect({ call, rules: named(none, call).length > 0 }).toEqual({ call, rules: true })
    }
    const root = rulesOf({ blockUnixSockets: true, blockSetId: false })
    expect(named(root, "chmod")).toEqual([])
    // What the engine's default profile refused and no dropped capability does, kept either way.
    for (const call of ["io_uring_setup", "keyctl", "bpf", "userfaultfd", "unshare", "clone", "clone3", "openat2"]) {
      expect({ call, rules: named(root, call).length > 0 }).toEqual({ call, rules: true })
    }
  })

  it("an open refuses a set-id mode only when it creates", () => {
    const openat = named(rulesOf({ blockUnixSockets: false, blockSetId: true }), "openat")
    for (const rule of openat) expect(rule.args?.map((arg) => arg.index)).toEqual([2, 3])
    expect(openat.map((rule) => rule.args?.map((arg) => arg.value))).toEqual([[0o100, 0o4000], [0o20000000, 0o4000], [0o100, 0o2000], [0o20000000, 0o2000]])
  })
})
