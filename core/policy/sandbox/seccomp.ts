/**
 * The seccomp filter that closes unix sockets (and the kernel keyrings, BPF, perf and the kernel
 * log: step 6) inside the Linux sandbox (issue 16 §1 "Sockets
 * closed by mechanism"; docs/permissions.md "Unix sockets"). A socket file on a read-only mount
 * still accepts connections, and abstract sockets (`\0name`) have no file at all, so hiding known
 * paths cannot be complete: instead no process in the sandbox may *create* an `AF_UNIX` socket.
 * `socketpair(2)` of stream and seqpacket sockets, pipes and `AF_INET`/`AF_INET6` sockets keep
 * working (a datagram pair is refused: see step 5). Claude Code's
 * sandbox-runtime does the same with a prebuilt program; this one is generated here, nothing is
 * downloaded.
 *
 * The program is classic BPF as `seccomp(2)` / `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` take
 * it and as `bwrap --seccomp FD` reads it from a file descriptor: an array of
 * `struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }` (8 bytes each, little-endian on
 * both x86_64 and aarch64), run against `struct seccomp_data { int nr; __u32 arch;
 * __u64 instruction_pointer; __u64 args[6]; }` (linux/seccomp.h: `nr` at offset 0, `arch` at 4,
 * `args[0]` at 16, its low 32 bits first on a little-endian machine).
 *
 * What it does, in order:
 * 1. `arch` ≠ the native `AUDIT_ARCH_*` value (linux/audit.h: `AUDIT_ARCH_X86_64` 0xc000003e,
 *    `AUDIT_ARCH_AARCH64` 0xc00000b7) → `SECCOMP_RET_KILL_PROCESS`: a 32-bit (ia32 via `int 0x80`,
 *    arm32 compat) program has other syscall numbers and `socketcall(2)`, which could go around
 *    the check, so it is ended instead.
 * 2. x86_64 only: `nr` with the x32 bit (`__X32_SYSCALL_BIT` 0x40000000) → kill (x32 shares the
 *    x86_64 audit arch with other numbers).
 * 3. `io_uring_setup` (425 on both) → `EPERM`: `IORING_OP_SOCKET` creates sockets without the
 *    `socket` syscall.
 * 4. `socket` (x86_64 41, aarch64 198; asm/unistd) with `args[0]` (the domain, an `int`) =
 *    `AF_UNIX` (1) → `SECCOMP_RET_ERRNO | EPERM` ("Operation not permitted"); the same for
 *    `AF_VSOCK` (40): in a virtual machine a virtio socket reaches the hypervisor's host, which no
 *    network namespace isolates.
 * 5. `socketpair` (x86_64 53, aarch64 199) whose type (`args[1]`, with `SOCK_NONBLOCK` 0x800 and
 *    `SOCK_CLOEXEC` 0x80000 masked off) is not `SOCK_STREAM` (1) or `SOCK_SEQPACKET` (5) →
 *    `EPERM`, whatever the domain: a datagram pair socket is unconnected enough to `sendto` or
 *    `connect` any socket file (`/dev/log`, the journal's socket, a listener outside) and to
 *    `bind` a new one (attack trial 2 item 3); `SOCK_RAW` on `AF_UNIX` is a datagram socket too,
 *    hence an allow list. Stream and seqpacket pairs are connected to each other and cannot
 *    reach another socket (`connect` fails with `EISCONN`).
 * 6. Syscalls that reach kernel state no namespace bwrap makes separates (the same ones Docker's
 *    default profile refuses, attack pass 4) → `EPERM`, by number ({@link REFUSED_SYSCALLS}):
 *    - `add_key`, `request_key`, `keyctl`: the kernel keyrings are per uid, not per mount, PID or
 *      IPC namespace, so a command read the user keyring of the uid Coyote runs as
 *      (`keyctl search @u user name` then `keyctl read`) and keys it added stayed on the host;
 *    - `bpf`: where `kernel.unprivileged_bpf_disabled` is 0 a command loads programs and maps into
 *      the host kernel (shared with every namespace);
 *    - `perf_event_open`: where `kernel.perf_event_paranoid` is below 1 (some distributions and
 *      containers set -1) it measures the CPU and the kernel system-wide, other users' processes
 *      included;
 *    - `syslog`: where `kernel.dmesg_restrict` is 0 it reads the host's kernel log (`dmesg`;
 *      bwrap's `/dev` has no `/dev/kmsg`).
 *    Not listed, and why: `kexec_load`, `kexec_file_load`, `init_module`, `open_by_handle_at`,
 *    `mount`, `swapon`, `reboot`, `settimeofday`, … need a capability, and bwrap drops all
 *    (`--cap-drop ALL`, also as root); `name_to_handle_at` only yields a handle that
 *    `open_by_handle_at` cannot use without one; `userfaultfd` reaches no host state (an exploit
 *    aid only; unprivileged use is off by default since Linux 5.11); `ptrace`,
 *    `process_vm_readv`, `kcmp` are confined by the PID namespace.
 * 7. Everything else → `SECCOMP_RET_ALLOW`.
 *
 * What it does not cover: a unix socket fd that a process already holds when it enters the
 * sandbox (Coyote passes none), and `connect` of sockets created outside.
 * @module
 */

/** Architectures the filter is generated for (`Deno.build.arch`). */
export type SeccompArch = "x86_64" | "aarch64";

/** Per architecture: the audit value and the syscall numbers the filter names. */
export const SECCOMP_ARCH: Readonly<
  Record<
    SeccompArch,
    { audit: number; socket: number; socketpair: number; ioUringSetup: number; x32: boolean }
  >
> = {
  x86_64: { audit: 0xc000003e, socket: 41, socketpair: 53, ioUringSetup: 425, x32: true },
  aarch64: { audit: 0xc00000b7, socket: 198, socketpair: 199, ioUringSetup: 425, x32: false },
};

/**
 * Syscalls refused with `EPERM` whatever their arguments (step 6 of the module doc), by name,
 * with their numbers per architecture (x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64:
 * the generic table, include/uapi/asm-generic/unistd.h).
 */
export const REFUSED_SYSCALLS: Readonly<Record<string, Readonly<Record<SeccompArch, number>>>> = {
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  keyctl: { x86_64: 250, aarch64: 219 },
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  syslog: { x86_64: 103, aarch64: 116 },
};

// linux/filter.h, linux/bpf_common.h
const BPF_LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_RET_K = 0x06; // BPF_RET | BPF_K
const BPF_ALU_AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K
// linux/seccomp.h
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const AF_UNIX = 1;
// linux/socket.h: virtio sockets reach the hypervisor host, around every network namespace.
const AF_VSOCK = 40;
const X32_SYSCALL_BIT = 0x40000000;
// linux/net.h: socket types; the flags a type may carry (linux/net.h SOCK_NONBLOCK, SOCK_CLOEXEC).
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
const SOCK_TYPE_FLAGS = 0x800 | 0x80000;
// offsets in struct seccomp_data
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0 = 16;
const OFF_ARG1 = 24;

/** A return to jump to, or a number of instructions to skip (0: the next one). */
type Label = "allow" | "errno" | "kill" | number;
type Insn = { code: number; k: number; jt?: Label; jf?: Label };

/**
 * The filter for `arch` as the bytes `bwrap --seccomp FD` reads (a whole number of 8-byte
 * `sock_filter` entries). Throws for an architecture it does not know.
 */
export function unixSocketFilter(arch: string = Deno.build.arch): Uint8Array {
  const a = SECCOMP_ARCH[arch as SeccompArch];
  if (!a) throw new Error(`no seccomp filter for architecture ${arch} (x86_64 and aarch64 only)`);
  const prog: Insn[] = [
    { code: BPF_LD_W_ABS, k: OFF_ARCH },
    { code: BPF_JEQ_K, k: a.audit, jt: 0, jf: "kill" },
    { code: BPF_LD_W_ABS, k: OFF_NR },
    ...(a.x32 ? [{ code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: "kill", jf: 0 } as Insn] : []),
    { code: BPF_JEQ_K, k: a.ioUringSetup, jt: "errno", jf: 0 },
    ...Object.values(REFUSED_SYSCALLS).map((n): Insn => ({
      code: BPF_JEQ_K,
      k: n[arch as SeccompArch],
      jt: "errno",
      jf: 0,
    })),
    { code: BPF_JEQ_K, k: a.socketpair, jt: 0, jf: 4 },
    // socketpair: only stream and seqpacket types (flags masked off).
    { code: BPF_LD_W_ABS, k: OFF_ARG1 },
    { code: BPF_ALU_AND_K, k: ~SOCK_TYPE_FLAGS >>> 0 },
    { code: BPF_JEQ_K, k: SOCK_STREAM, jt: "allow", jf: 0 },
    { code: BPF_JEQ_K, k: SOCK_SEQPACKET, jt: "allow", jf: "errno" },
    { code: BPF_JEQ_K, k: a.socket, jt: 0, jf: "allow" },
    { code: BPF_LD_W_ABS, k: OFF_ARG0 },
    { code: BPF_JEQ_K, k: AF_UNIX, jt: "errno", jf: 0 },
    { code: BPF_JEQ_K, k: AF_VSOCK, jt: "errno", jf: "allow" },
  ];
  const at = { allow: prog.length, errno: prog.length + 1, kill: prog.length + 2 };
  const rets = [SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_KILL_PROCESS];
  const out = new Uint8Array((prog.length + rets.length) * 8);
  const v = new DataView(out.buffer);
  const jump = (
    i: number,
    l: Label | undefined,
  ) => (l === undefined ? 0 : typeof l === "number" ? l : at[l] - i - 1);
  prog.forEach((p, i) => {
    v.setUint16(i * 8, p.code, true);
    v.setUint8(i * 8 + 2, jump(i, p.jt));
    v.setUint8(i * 8 + 3, jump(i, p.jf));
    v.setUint32(i * 8 + 4, p.k, true);
  });
  rets.forEach((k, j) => {
    const i = prog.length + j;
    v.setUint16(i * 8, BPF_RET_K, true);
    v.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return out;
}

let written: string | undefined;
/**
 * A file (created once per process, mode 0444) holding {@link unixSocketFilter} for this
 * machine, for `bwrap --seccomp 3 … 3<file`; undefined where no filter exists (another
 * architecture).
 */
export function unixSocketFilterFile(): string | undefined {
  if (written) return written;
  if (!(Deno.build.arch in SECCOMP_ARCH)) return undefined;
  const p = Deno.makeTempFileSync({ prefix: "coyote-unix-", suffix: ".bpf" });
  Deno.writeFileSync(p, unixSocketFilter());
  Deno.chmodSync(p, 0o444);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(p);
    } catch { /* gone */ }
  });
  written = p;
  return p;
}
