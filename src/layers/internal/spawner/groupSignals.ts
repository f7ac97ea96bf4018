/**
 * Signalling a process group: the one place the host sends a group a signal (the kill path's
 * SIGTERM, grace and SIGKILL are `killGroup`'s, in the executor). The reapers, processes of their own,
 * SIGKILL their groups themselves when the host dies (`reaperProcess.ts`).
 *
 * @internal
 */
import type { ProcessSpawner } from "../../../services/ProcessSpawner.js"
import { errnoCode, pidEntries, statOf } from "./groupLiveness.js"

/**
 * Sends `signal` to every member of group `pgid`. A vanished group (ESRCH) is not an error, nor is a
 * group whose remaining members we may not signal (EPERM: e.g. a setuid program); the liveness
 * check still sees those, and the kill path stays bounded by its grace.
 */
export const signalGroupSync = (pgid: number, signal: ProcessSpawner.GroupSignal): void => signalSync(-pgid, signal)

/** `process.kill(target, signal)`, where a vanished target (ESRCH) or one we may not signal (EPERM) is no error. */
const signalSync = (target: number, signal: ProcessSpawner.GroupSignal): void => {
  try {
    process.kill(target, signal)
  } catch (error) {
    const code = errnoCode(error)
    if (code !== "ESRCH" && code !== "EPERM") throw error
  }
}

/**
 * Sends `signal` to the members of group `pgid` except its leader (a PID-namespace runner) and the
 * leader's direct children (the namespace's init), so the runner keeps the namespace up while the
 * command inside handles the signal. Vanished members are not an error.
 */
export const signalNamespaceMembersSync = (pgid: number, signal: ProcessSpawner.GroupSignal): void => {
  for (const entry of pidEntries()) {
    const pid = Number(entry)
    if (pid === pgid) continue
    const stat = statOf(entry)
    if (stat === undefined || stat.pgrp !== pgid || stat.ppid === pgid) continue
    signalSync(pid, signal)
  }
}
