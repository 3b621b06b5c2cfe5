/**
 * Break pass 5 (issue 16 class 5, "deny rules lose to auto-allow"): programs on the allow list of
 * programs known to run no code (core/policy/shell/programs/unknown.ts `RUNS_NO_CODE`), or with
 * their own rules, still run a command named by an option the rule does not recognise: GNU
 * getopt_long accepts any unambiguous prefix of a long option (`split --fil=sh` is
 * `--filter=sh`, `tar --to-com=sh` is `--to-command=sh`, `sort --com=sh` is
 * `--compress-program=sh`, `install --strip-p=sh` is `--strip-program=sh`, `zip --unzip-c` is
 * `--unzip-command`), mawk's `-W exec` in one word or abbreviated (`-Wexec`, `-W e`), and zip's
 * options from `ZIPOPT`, and `nm --plu=` (`--plugin`) loading a library the line wrote. Each line deletes a folder by a name the guard cannot see (the script is
 * written to a file first), under `--deny 'Execute(rm *)'`.
 *
 * Each test asserts the SAFE behaviour (the line yields: asks, so headless denies it) and fails
 * until the guard treats these options (or these programs) as running code. The headless run is on
 * real bwrap; the same lines with the guard forced open do delete (so the test can fail).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { loadShellParser } from "../core/policy/shell/parse.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const ON = { active: true, autoAllow: true };
const DENY = ["--deny", "Execute(rm *)"];
const FORCED = { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" };
const rm = (v: string) => `x=r; \${x}m -rf ${v}`;

/**
 * A shared library whose constructor runs `cmd`, compiled here with gcc, as xz-compressed
 * base64 (about 1.7 kB: a guard line is at most 4000 characters).
 */
async function plugin(cmd: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "b5so-" });
  try {
    await Deno.writeTextFile(
      join(dir, "p.c"),
      `#include <stdlib.h>\n__attribute__((constructor)) static void k(void){ system("${cmd}"); }\n`,
    );
    const o = await new Deno.Command("bash", {
      args: ["-c", "gcc -shared -fPIC -Os -s -o p.so p.c && xz -9e -c p.so | base64 -w0"],
      cwd: dir,
      stderr: "inherit",
    }).output();
    assert.ok(o.success, "gcc/xz/base64");
    return new TextDecoder().decode(o.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The lines that got through; line i deletes folder `v<i>`. */
const LINES = [
  // split --filter=CMD, abbreviated: the chunk is the shell's input.
  `printf '${rm("v0")}\\n' > s0; split -n1 --fil=sh s0`,
  // tar --to-command, abbreviated: each member's content is the shell's input.
  `printf '${rm("v1")}\\n' > s1; tar -cf t1.tar s1; tar --to-com=sh -xf t1.tar`,
  // tar --checkpoint-action=exec=CMD, abbreviated.
  `printf '${rm("v2")}\\n' > s2; tar --checkpoint=1 --checkpoint-a=exec='sh s2' -cf /dev/null s2`,
  // install -s --strip-program=PROG, abbreviated: `sh b3` runs the installed copy.
  `printf '${rm("v3")}\\n' > s3; install -s --strip-p=sh s3 b3`,
  // zip -T --unzip-command=CMD, abbreviated.
  `printf '${rm("v4")}\\n' > s4; zip -q x4.zip s4 -T --unzip-c='sh s4 {}'`,
  // mawk -W exec FILE in one word.
  `printf 'BEGIN{system("${rm("v5")}")}\\n' > s5.awk; awk -Wexec s5.awk`,
  // mawk -W exec abbreviated.
  `printf 'BEGIN{system("${rm("v6")}")}\\n' > s6.awk; awk -W e s6.awk`,
  // sort --compress-program=PROG, abbreviated: the temporary data is the shell's input.
  `{ echo '${
    rm("v7")
  }'; yes '#aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' | head -n 4000; } > s7; sort -S 64K --com=sh s7 > /dev/null`,
  // nm --plugin=LIB, abbreviated, with a library the line writes (not executable, so the
  // executable-operand rule does not see it; $PWD hides the path): its constructor runs `sh s8`.
  `printf '${rm("v8")}\\n' > s8; base64 -d <<< ${await plugin(
    "sh s8",
  )} | xz -d > pl; nm --plu=$PWD/pl s8`,
];
/** Verdict-only lines that are allowed too (not run: they need a planted program or a tty). */
const VERDICT_ONLY = [
  // zip reads options from ZIPOPT: -TT names the test command.
  `printf '${rm("v9")}\\n' > s9; ZIPOPT='-T -TT sh' zip -q x9.zip s9`,
  "man --pa=./p.sh ls",
  "MANOPT='-P ./p.sh' man ls",
  "LESS='+!sh p.sh' less a.txt",
  "LESSKEYIN=/tmp/k less a.txt",
  'awk \'BEGIN{f="sys" "tem"; @f("sh p.sh")}\'',
  "awk -bf p.awk",
  // More abbreviated tar options that name a program, and objdump's --plugin.
  "tar --use=sh -cf x a.txt",
  "tar --info-s=sh -cf x a.txt",
  "tar --new-v=sh -cf x a.txt",
  "tar --rsh-c=sh -cf h:x a.txt",
  "tar --rmt-c=sh -cf h:x a.txt",
  "objdump --plu=$PWD/pl -d a.txt",
];

async function sh(cmd: string, cwd?: string): Promise<void> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd, stderr: "inherit" }).output();
  assert.ok(o.success, cmd);
}
const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

async function world() {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "b5-" }));
  const ws = join(root, "ws");
  await sh(`set -e; mkdir -p ${ws}; cd ${ws}; git init -q
git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init
for i in 0 1 2 3 4 5 6 7 8 9; do mkdir v$i; echo x > v$i/f; done`);
  return {
    root,
    ws,
    gone: async () => {
      const out: string[] = [];
      for (let i = 0; i < 10; i++) if (!(await exists(join(ws, `v${i}`)))) out.push(`v${i}`);
      return out;
    },
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

async function run(ws: string, cmds: string[], flags: string[], extra: Record<string, string>) {
  const r = await headlessTurns(ws, cmds.map((command, i) => [{ id: `c${i}`, command }]), flags, {
    extra,
  });
  return new Set(r.out.denied.map((d) => d.toolCallId));
}

Deno.test("break5 guard: abbreviated code-running long options, mawk -Wexec and ZIPOPT yield to Execute(rm *)", async () => {
  await loadShellParser();
  const w = await world();
  try {
    const p = Policy.create({}, { allow: [], deny: ["Execute(rm *)"] }, {
      workspace: w.ws,
      configDir: join(w.root, "cfg"),
    });
    await p.globsReady();
    const g = sandboxGuard(p, ON);
    const allowed: string[] = [];
    for (const command of [...LINES, ...VERDICT_ONLY]) {
      if ((await g.evaluate({ type: "execute", command })).decision === "allow") {
        allowed.push(command);
      }
    }
    assert.deepEqual(allowed, [], "auto-allowed under --deny 'Execute(rm *)'");
  } finally {
    await w.cleanup();
  }
});

Deno.test({
  name:
    "break5 e2e: under --deny 'Execute(rm *)' the lines are denied headless and delete nothing; forced open they delete",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const open = await world();
    try {
      await run(open.ws, LINES, DENY, FORCED);
      // The lines work: with the guard forced open each deletes its folder.
      assert.deepEqual(await open.gone(), LINES.map((_, i) => `v${i}`));
    } finally {
      await open.cleanup();
    }
    const w = await world();
    try {
      const denied = await run(w.ws, LINES, DENY, {});
      const gone = await w.gone();
      assert.deepEqual(
        { denied: [...denied].sort(), gone },
        { denied: LINES.map((_, i) => `c${i}`).sort(), gone: [] },
      );
    } finally {
      await w.cleanup();
    }
  },
});
