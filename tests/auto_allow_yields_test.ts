/**
 * Auto-allow yields (issue 16 §5, docs/permissions.md "Auto-allow yields"): a command runs inside
 * the OS sandbox without asking only when the guard understood all of it. While an `Execute` deny
 * or ask rule exists, a command that evaluates strings as code or that the guard cannot fully
 * analyse asks (denied in headless) with that rule, so `sandboxGuard` does not lift it; an allow
 * rule on the program does not cover what the command line evaluates. Unit rows through the real
 * policy and `sandboxGuard`, then the three reported examples and siblings end to end: headless
 * `coyote` on real bwrap, a scripted model running them, `victim` surviving, the denials
 * reported.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { detectBackend, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { headlessAttack } from "./support/headless_attack.ts";

const ON = SANDBOX_ON;

async function repo(): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-yield-" }));
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  await Deno.mkdir(join(ws, "victim"));
  await Deno.writeTextFile(join(ws, "victim", "keep.txt"), "keep\n");
  await Deno.writeTextFile(join(ws, "list"), "victim\n");
  return ws;
}

/** [allow rules, deny rules, command, expected decision under sandboxGuard]. */
const ROWS: [string[], string[], string, "allow" | "ask" | "deny"][] = [
  // The reported examples.
  [[], ["Execute(rm *)"], "git -c core.fsmonitor='rm -rf victim' status", "ask"],
  [["Execute(find*)"], ["Execute(rm *)"], "find victim -delete", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git -c alias.zap='!rm -rf victim' zap", "ask"],
  // Siblings: configuration keys, program texts, unknown strings, interpreters, build tools.
  [[], ["Execute(rm *)"], "git -c core.pager='rm -rf v' log", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git --config-env=core.pager=X log", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git fetch --upload-pack='rm -rf v' origin", "ask"],
  [[], ["Execute(rm *)"], 'sh -c "$CMD"', "ask"],
  [[], ["Execute(rm *)"], 'eval "$CMD"', "ask"],
  [[], ["Execute(rm *)"], "sh script.sh", "ask"],
  [[], ["Execute(rm *)"], "./build.sh", "ask"],
  [[], ["Execute(rm *)"], "python3 -c \"import shutil; shutil.rmtree('v')\"", "ask"],
  [["Execute(python3*)"], ["Execute(rm *)"], "python3 -c 'import os'", "ask"],
  [[], ["Execute(rm *)"], "perl -e 'system(\"rm -rf v\")'", "ask"],
  [[], ["Execute(rm *)"], 'node -e \'require("fs").rmSync("v",{recursive:true})\'', "ask"],
  [[], ["Execute(rm *)"], "awk 'BEGIN{system(\"rm -rf v\")}'", "ask"],
  [[], ["Execute(rm *)"], "env -S 'rm -rf v'", "ask"],
  [[], ["Execute(rm *)"], "xargs $X < list", "ask"],
  [[], ["Execute(rm *)"], "make clean", "ask"],
  [[], ["Execute(rm *)"], "npm run clean", "ask"],
  [[], ["Execute(rm *)"], "npx rimraf v", "ask"],
  [[], ["Execute(rm *)"], "cargo run", "ask"],
  [[], ["Execute(rm *)"], "sed -f script.sed f", "ask"],
  [[], ["Execute(rm *)"], "X=rm; $X -rf v", "ask"],
  [[], ["Execute(rm *)"], "source ./env.sh", "ask"],
  // Siblings found in the second attacker pass: programs that run a command or a string.
  [[], ["Execute(rm *)"], "sed -i 'e rm -rf victim' list", "ask"],
  [[], ["Execute(rm *)"], "sed -i 's/x/rm -rf v/e' list", "ask"],
  [[], ["Execute(rm *)"], "tar cf /dev/null --to-command='rm -rf victim' list", "ask"],
  [
    [],
    ["Execute(rm *)"],
    "tar cf x.tar --checkpoint=1 --checkpoint-action=exec='rm -rf v' list",
    "ask",
  ],
  [[], ["Execute(rm *)"], "tar -cI 'rm -rf v' -f x.tar list", "ask"],
  [[], ["Execute(rm *)"], "flock /tmp/l rm -rf victim", "ask"],
  [[], ["Execute(rm *)"], "ssh-agent rm -rf victim", "ask"],
  [[], ["Execute(rm *)"], "chroot / rm -rf victim", "ask"],
  [[], ["Execute(rm *)"], "busybox rm -rf victim", "ask"],
  [[], ["Execute(rm *)"], "rsync -e 'rm -rf v' a b:", "ask"],
  [[], ["Execute(rm *)"], "rg --pre rm x .", "ask"],
  [[], ["Execute(rm *)"], "PAGER='rm -rf v' man ls", "ask"],
  [[], ["Execute(rm *)"], "LESSOPEN='|rm -rf v %s' less list", "ask"],
  [[], ["Execute(rm *)"], "LD_PRELOAD=./evil.so ls", "ask"],
  [[], ["Execute(rm *)"], "export GIT_SSH_COMMAND='rm -rf v'; git fetch", "ask"],
  [[], ["Execute(rm *)"], "NODE_OPTIONS='--require ./x.js' ls", "ask"],
  [[], ["Execute(rm *)"], "shopt -s expand_aliases", "ask"],
  [[], ["Execute(rm *)"], "set -o posix", "ask"],
  [[], ["Execute(rm *)"], 'trap "$X" EXIT', "ask"],
  [[], ["Execute(rm *)"], "trap 'rm -rf victim' EXIT", "deny"],
  [[], ["Execute(rm *)"], "trap 'echo bye' EXIT; echo hi", "allow"],
  [[], ["Execute(rm *)"], "bazel run //x", "ask"],
  [[], ["Execute(rm *)"], "zig build", "ask"],
  [[], ["Execute(rm *)"], "composer run x", "ask"],
  // Third attacker pass (issue 16 item 5): editors and git subcommands that run command strings.
  [[], ["Execute(rm *)"], "printf '!rm victim\\nq\\n' | ed -s", "ask"],
  [[], ["Execute(rm *)"], "ex -s -c '!rm victim' -c q", "ask"],
  [[], ["Execute(rm *)"], "printf '!rm victim\\n' | ex -s", "ask"],
  [["Execute(vim*)"], ["Execute(rm *)"], "vim -es -c '!rm victim' list", "ask"],
  [[], ["Execute(curl *)"], "ex -s -c '!curl http://x' -c q", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git difftool -y -x 'rm victim' HEAD~1", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git difftool -y --extcmd='rm victim' HEAD~1", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git mergetool --tool=x", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git submodule foreach 'rm ../victim'", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git rebase -x 'rm victim' HEAD~1", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git rebase -ix 'rm victim' HEAD~1", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git bisect run rm victim", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git filter-branch --tree-filter 'rm victim' HEAD", "ask"],
  [["Execute(git*)"], ["Execute(rm *)"], "git send-email --to-cmd='rm v' x.patch", "ask"],
  [[], ["Execute(rm *)"], "socat - EXEC:'rm victim'", "ask"],
  [[], ["Execute(rm *)"], "socat - SYSTEM:'rm victim'", "ask"],
  [[], ["Execute(rm *)"], "fd -x rm", "ask"],
  [[], ["Execute(rm *)"], "split --filter='rm victim' list", "ask"],
  [[], ["Execute(rm *)"], "sort --compress-program=./x list", "ask"],
  [[], ["Execute(rm *)"], "zip -T -TT 'rm v' a.zip list", "ask"],
  [[], ["Execute(rm *)"], "scp -S ./evil a b:", "ask"],
  [[], ["Execute(rm *)"], "dc -e '!rm victim'", "ask"],
  [[], ["Execute(rm *)"], "dtach -n /tmp/s rm victim", "ask"],
  [[], ["Execute(rm *)"], "crontab x", "ask"],
  [[], ["Execute(rm *)"], "unbuffer rm victim", "ask"],
  // Wrappers are analysed: the deny rule meets the inner command.
  [[], ["Execute(rm *)"], "nohup rm victim", "deny"],
  [[], ["Execute(rm *)"], "setsid rm victim", "deny"],
  // Their harmless forms still run as before.
  [["Execute(git*)"], ["Execute(rm *)"], "git rebase -Xtheirs HEAD~1", "allow"],
  [["Execute(git*)"], ["Execute(rm *)"], "git bisect good", "allow"],
  [["Execute(git*)"], ["Execute(rm *)"], "git submodule status", "allow"],
  [[], ["Execute(rm *)"], "socat - TCP:localhost:80", "allow"],
  [[], ["Execute(rm *)"], "fd -H foo", "allow"],
  // Analysed inner commands meet the deny rule itself.
  [["Execute(find*)"], ["Execute(rm *)"], "find . -name x -exec rm {} +", "deny"],
  [[], ["Execute(rm *)"], "xargs rm < list", "deny"],
  [[], ["Execute(rm *)"], "sh -c 'rm -rf v'", "deny"],
  [[], ["Execute(rm *)"], 'eval "rm -rf v"', "deny"],
  // What the guard understands still runs unasked in the sandbox.
  [[], ["Execute(rm *)"], "sed -i 's/a/b/' list", "allow"],
  [[], ["Execute(rm *)"], "tar cf out.tar list", "allow"],
  [[], ["Execute(rm *)"], "LANG=C sort list", "allow"],
  [[], ["Execute(rm *)"], "mkdir out && touch out/x", "allow"],
  [[], ["Execute(rm *)"], "git -c color.ui=never log", "allow"],
  [[], ["Execute(rm *)"], "awk '{print $1}' f", "allow"],
  [[], ["Execute(rm *)"], "find . -name '*.ts'", "allow"],
  // The user chose to run the project's code by naming it.
  [["Execute(npm run test)"], ["Execute(rm *)"], "npm run test", "allow"],
  // Without any Execute deny or ask rule nothing changes: auto-allow runs them in the sandbox.
  [[], [], "find victim -delete", "allow"],
  [[], [], "npm run clean", "allow"],
  [[], [], "git -c core.pager='rm -rf v' log", "allow"],
  [[], ["Read(/secret/**)"], "python3 -c 'print(1)'", "allow"],
];

Deno.test("auto-allow yields: opaque commands ask while an Execute deny or ask rule exists", async () => {
  const ws = await repo();
  try {
    const failures: string[] = [];
    for (const [allow, deny, command, want] of ROWS) {
      const policy = Policy.create({}, { allow, deny }, { workspace: ws, configDir: "/c" });
      const v = await sandboxGuard(policy, ON).evaluate({ type: "execute", command });
      if (v.decision !== want) {
        failures.push(
          `${
            JSON.stringify(command)
          } (allow ${allow}, deny ${deny}): ${v.decision}, want ${want} — ${v.reason}`,
        );
      }
    }
    // An ask rule yields as a deny rule does.
    const asking = Policy.create({ ask: ["Execute(curl *)"] }, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: "/c",
    });
    const v = await sandboxGuard(asking, ON).evaluate({
      type: "execute",
      command: "git -c core.pager='rm -rf v' log",
    });
    if (v.decision !== "ask" || v.rule !== "Execute(curl *)") {
      failures.push(`ask rule: ${v.decision} ${v.rule} — ${v.reason}`);
    }
    assert.deepEqual(failures, []);
    // The reason names the rule it yields to.
    const p = Policy.create({}, { allow: [], deny: ["Execute(rm *)"] }, {
      workspace: ws,
      configDir: "/c",
    });
    const r = await sandboxGuard(p, ON).evaluate({ type: "execute", command: "make clean" });
    assert.equal(r.rule, "Execute(rm *)");
    assert.match(r.reason, /auto-allow yields/);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

/**
 * Fourth attacker pass (issue 16 class 5): findings that mean "code runs, a program is chosen or
 * a library is loaded" are opaque, so with `--deny 'Execute(rm *)'` every sibling asks (denied
 * headless) or is denied, and `--allow 'Execute(git*)'` does not cover git's. [allow rules,
 * command, want].
 */
const OPAQUE_SIBLINGS: [string[], string, "allow" | "ask"][] = [
  // Builtins whose argument is a variable name: a subscript is arithmetic, evaluated as code.
  [[], "printf -v 'a[$(rm -rf v)]' x", "ask"],
  [[], "read -r 'a[$(rm -rf v)]' <<< x", "ask"],
  [[], "read -a 'a[$(rm -rf v)]' <<< x", "ask"],
  [[], "mapfile -t 'a[$(rm -rf v)]' < list", "ask"],
  [[], "readarray 'a[$(rm -rf v)]' < list", "ask"],
  [[], "getopts ab 'a[$(rm -rf v)]'", "ask"],
  [[], "declare 'a[$(rm -rf v)]=1'", "ask"],
  [[], "local 'a[$(rm -rf v)]=1'", "ask"],
  [[], "export 'a[$(rm -rf v)]=1'", "ask"],
  [[], "let 'a[$(rm -rf v)]=1'", "ask"],
  [[], "(( a[$X] ))", "ask"],
  [[], "[[ -v 'a[$(rm -rf v)]' ]]", "ask"],
  [[], "test -v 'a[$(rm -rf v)]'", "ask"],
  [[], "unset 'a[$(rm -rf v)]'", "ask"],
  [[], "builtin printf -v 'a[$(rm -rf v)]' x", "ask"],
  // Which program a name runs: hash -p, enable, functions passed in the environment.
  [[], "hash -p /usr/bin/rm ls; ls -rf v", "ask"],
  [[], "builtin hash -p /usr/bin/rm ls", "ask"],
  [[], "command hash -p /usr/bin/rm ls", "ask"],
  [[], "enable -f ./e.so rmv", "ask"],
  [[], "enable -n echo", "ask"],
  [[], "env 'BASH_FUNC_ls%%=() { rm -rf v; }' bash -c ls", "ask"],
  [[], "env 'BASH_FUNC_ls%%=() { rm -rf v; }' ls", "ask"],
  [[], "env 'f=() { rm -rf v; }' bash -c f", "ask"],
  // Variables that load code or choose programs, set for a command.
  [[], "LD_AUDIT=./e.so ls", "ask"],
  [[], "env LD_PRELOAD=./e.so ls", "ask"],
  [[], "GCONV_PATH=. iconv -f x list", "ask"],
  [[], "PS4='$(rm -rf v)' bash -xc ls", "ask"],
  [[], "OPENSSL_CONF=./o.cnf openssl version", "ask"],
  [[], "PATH=./bin ls", "ask"],
  [[], "HOME=. git log", "ask"],
  // Options that load a library, plugin or module, in known and in unknown programs.
  [[], "openssl req -engine ./e.so", "ask"],
  [[], "openssl req -provider-path . -provider x", "ask"],
  [[], "openssl engine ./e.so", "ask"],
  [[], "curl --engine x https://example.com", "ask"],
  [[], "gcc -fplugin=./p.so x.c", "ask"],
  [["Execute(gcc*)"], "gcc -fplugin=./p.so x.c", "ask"],
  [["Execute(gcc*)"], "gcc -wrapper ./w x.c", "ask"],
  [["Execute(node*)"], "node --require ./x.js s.js", "ask"],
  [["Execute(node*)"], "node --import ./x.mjs s.js", "ask"],
  [["Execute(perl*)"], "perl -MFoo s.pl", "ask"],
  [["Execute(ssh*)"], "ssh -o ProxyCommand='rm -rf v' h", "ask"],
  [[], "some-tool --plugin ./p.so", "ask"],
  [[], "some-tool --load ./x.so", "ask"],
  [[], "some-tool --module=./x.so", "ask"],
  // git: options that run a program, arguments only known at run time, every -c looked at.
  [[], "git grep -O'rm -rf v' -e x", "ask"],
  [["Execute(git*)"], "git grep -O'rm -rf v' -e x", "ask"],
  [["Execute(git*)"], "git grep -O -e x", "ask"],
  [["Execute(git*)"], "git grep --open-files-in-pager='rm -rf v' -e x", "ask"],
  [["Execute(git*)"], "git ls-remote -u 'rm -rf v' .", "ask"],
  [["Execute(git*)"], "git -c color.ui=never -c core.pager='rm -rf v' log", "ask"],
  [["Execute(git*)"], "git $SUB", "ask"],
  [["Execute(git*)"], "git log $ARG", "ask"],
  // Found trying again: builtins and shell options that run code, a loop variable that is
  // PATH, pagers' and diff tools' program options, git writing program keys or hooks, runners.
  [[], "compgen -C 'rm -rf v' x", "ask"],
  [[], "compgen -W '$X' x", "ask"],
  [[], "fc -e 'rm -rf v'", "ask"],
  [[], "for PATH in ./bin; do ls; done", "ask"],
  [[], "bash --init-file ./x -ic ls", "ask"],
  [[], "bash -O expand_aliases -c ls", "ask"],
  [[], "less '+!rm -rf v' list", "ask"],
  [[], "sdiff --diff-program='rm -rf v' list list", "ask"],
  [["Execute(git*)"], "git config alias.zap '!rm -rf v'", "ask"],
  [["Execute(git*)"], "git clone --template=./t . x", "ask"],
  [["Execute(git*)"], "git clone -c core.fsmonitor='rm -rf v' . x", "ask"],
  [["Execute(git*)"], "git help -w log", "ask"],
  [["Execute(npm*)"], "npm exec -- rm -rf v", "ask"],
  [["Execute(npm*)"], "npm exec -c 'rm -rf v'", "ask"],
  [["Execute(npx*)"], "npx -p foo rm -rf v", "ask"],
  [["Execute(uv*)"], "uv run rm -rf v", "ask"],
  // A shell or interpreter that reads its program from its input runs a string of the line.
  [["Execute(bash*)"], "echo 'rm -rf v' | bash", "ask"],
  [["Execute(bash*)"], "bash <<< 'rm -rf v'", "ask"],
  [["Execute(sh*)"], "sh -s < list", "ask"],
  [["Execute(python3*)"], "python3 - <<< 'import shutil'", "ask"],
  [["Execute(sqlite3*)"], "sqlite3 db '.shell rm -rf v'", "ask"],
  // What the guard understands stays auto-allowed (or allowed by its rule).
  [["Execute(bash*)"], "bash script.sh", "allow"],
  [["Execute(bash*)"], "bash -o pipefail script.sh", "allow"],
  [["Execute(node*)"], "node --version", "allow"],
  [["Execute(python3*)"], "python3 -m pytest", "allow"],
  [["Execute(uv*)"], "uv run pytest", "allow"],
  [["Execute(npm*)"], "npm run test", "allow"],
  [["Execute(git*)"], "git config user.name x", "allow"],
  [[], 'for f in *.ts; do wc -l "$f"; done', "allow"],
  [[], "bash -O globstar -c ls", "allow"],
  [[], "git status", "allow"],
  [[], "git log --oneline -n 5", "allow"],
  [[], "git -c color.ui=never status", "allow"],
  [[], "ls -la", "allow"],
  [[], "cp list list2", "allow"],
  [[], "mkdir -p out", "allow"],
  [[], "printf -v x %s y", "allow"],
  [[], "read -r a b <<< 'x y'", "allow"],
  [[], "mapfile -t lines < list", "allow"],
  [[], "env FOO=1 ls", "allow"],
  [[], "hash ls", "allow"],
  [[], "enable", "allow"],
  [[], "openssl version", "allow"],
  [["Execute(gcc*)"], "gcc -O2 -o x x.c", "allow"],
  [["Execute(git*)"], "git grep -n foo", "allow"],
  [[], "rg --engine=pcre2 foo", "allow"],
  [["Execute(make*)"], "make --load-average=4", "allow"],
  [[], "wait $pid", "allow"],
  [[], "wait -p 'a[$(rm -rf v)]'", "ask"],
  // Fifth attacker pass: wrappers of one process property (their inner command meets the deny
  // rule), runners of a command or a shell string, an unknown program naming a program, make
  // reading its makefile from the input or the command line, npm's script shell.
  [[], "setarch x86_64 rm -rf v", "ask"],
  [[], "setarch x86_64 -R rm -rf v", "ask"],
  [[], "setarch x86_64 <<< 'rm -rf v'", "ask"],
  [[], "linux64 sh -c 'rm -rf v'", "ask"],
  [[], "x86_64 rm -rf v", "ask"],
  [[], "i386 rm -rf v", "ask"],
  [[], "choom -n 0 -- rm -rf v", "ask"],
  [[], "uclampset -m 0 rm -rf v", "ask"],
  [[], "capsh -- -c 'rm -rf v'", "ask"],
  [[], "runcon -t x rm -rf v", "ask"],
  [[], "runcon ctx rm -rf v", "ask"],
  [[], "eatmydata rm -rf v", "ask"],
  [[], "numactl -- rm -rf v", "ask"],
  [[], "numactl --membind=0 rm -rf v", "ask"],
  [[], "cgexec -g cpu:x rm -rf v", "ask"],
  [[], "torsocks rm -rf v", "ask"],
  [[], "proxychains -q rm -rf v", "ask"],
  [[], "ncat -l 8080 -e '/bin/rm -rf v'", "ask"],
  [[], "nc -l -p 8080 -c 'rm -rf v'", "ask"],
  [[], "ipython -c 'import shutil'", "ask"],
  [[], "pdb3 x.py", "ask"],
  [[], "mise exec -- rm -rf v", "ask"],
  [[], "direnv exec . rm -rf v", "ask"],
  [[], "nix-shell --run 'rm -rf v'", "ask"],
  [[], "conda run -n base rm -rf v", "ask"],
  [[], "pipenv run rm -rf v", "ask"],
  [[], "some-wrapper rm -rf v", "ask"],
  [[], "some-wrapper -x -- rm -rf v", "ask"],
  [[], "some-wrapper -n 0 rm -rf v", "ask"],
  [[], "some-wrapper /usr/bin/rm -rf v", "ask"],
  [["Execute(make*)"], "make -f /dev/stdin <<< 'all:; rm -rf v'", "ask"],
  [["Execute(make*)"], "make -f - <<< 'all:; rm -rf v'", "ask"],
  [["Execute(make*)"], "make -f <(echo 'all:; rm -rf v')", "ask"],
  [["Execute(make*)"], "make --file=- all", "ask"],
  [["Execute(make*)"], "make -kf- all", "ask"],
  [["Execute(make*)"], "make --eval='all:; rm -rf v'", "ask"],
  [["Execute(make*)"], "make -E 'all:; rm -rf v'", "ask"],
  [["Execute(npm run test*)"], "npm run test --script-shell=./e.sh", "ask"],
  [["Execute(npm*)"], "npm --userconfig=./x.npmrc run test", "ask"],
  [["Execute(pnpm*)"], "pnpm --script-shell ./e.sh test", "ask"],
  // What only names a program, or wraps one harmlessly, stays auto-allowed or meets its rule.
  [[], "man rm", "allow"],
  [[], "which rm", "allow"],
  [[], "type rm", "allow"],
  [[], "whatis rm", "allow"],
  [[], "echo rm", "allow"],
  [[], "grep rm list", "allow"],
  [[], "cat list", "allow"],
  [[], "ls victim", "allow"],
  [[], "git log", "allow"],
  [[], "pgrep node", "allow"],
  [[], "apt-cache show git", "allow"],
  [[], "cp /usr/bin/ls ./ls2", "allow"],
  // A program without a rule is not understood (eleventh attacker pass): it yields, unless an
  // allow rule names it.
  [[], "gh pr view 12", "ask"],
  [[], "prettier --write src", "ask"],
  [["Execute(gh pr view*)"], "gh pr view 12", "allow"],
  [["Execute(prettier*)"], "prettier --write src", "allow"],
  [[], "setarch x86_64 ls", "allow"],
  [[], "eatmydata ls", "allow"],
  [[], "numactl --membind=0 ls", "allow"],
  [[], "nc -zv localhost 80", "allow"],
  [["Execute(make*)"], "make -f build.mk all", "allow"],
  [["Execute(make*)"], "make -C sub -j4", "allow"],
  [["Execute(npm run test*)"], "npm run test", "allow"],
];

Deno.test("auto-allow yields: code-running, program-choosing and library-loading siblings are opaque", async () => {
  const ws = await repo();
  try {
    const failures: string[] = [];
    for (const [allow, command, want] of OPAQUE_SIBLINGS) {
      const policy = Policy.create({}, { allow, deny: ["Execute(rm *)"] }, {
        workspace: ws,
        configDir: "/c",
      });
      const v = await sandboxGuard(policy, ON).evaluate({ type: "execute", command });
      // "ask" rows may also be denied outright (a deny rule sees the code); never allowed.
      if ((v.decision === "allow") !== (want === "allow")) {
        failures.push(`${JSON.stringify(command)} (allow ${allow}): ${v.decision} — ${v.reason}`);
      }
    }
    // A repository alias that is a shell command: `Execute(git*)` does not cover what it runs.
    await new Deno.Command("git", { args: ["-C", ws, "config", "alias.zap", "!rm -rf v"] })
      .output();
    for (const allow of [[], ["Execute(git*)"]]) {
      const policy = Policy.create({}, { allow, deny: ["Execute(rm *)"] }, {
        workspace: ws,
        configDir: "/c",
      });
      const v = await sandboxGuard(policy, ON).evaluate({ type: "execute", command: "git zap" });
      if (v.decision === "allow") failures.push(`git zap (allow ${allow}): ${v.reason}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

/** The examples and siblings the scripted model runs end to end (each would delete `victim`). */
const ATTACKS = [
  "git -c core.fsmonitor='rm -rf victim' status",
  "find victim -delete",
  "git -c alias.zap='!rm -rf victim' zap",
  "git -c core.pager='rm -rf victim' log",
  "find . -path ./victim/keep.txt -exec rm {} +",
  "xargs rm -rf < list",
  "sh -c 'rm -rf victim'",
  'eval "rm -rf victim"',
  "python3 -c 'import shutil; shutil.rmtree(\"victim\")'",
  // Third attacker pass: an editor fed commands on stdin, git running a command string.
  "printf '!rm -rf victim\\nq\\n' | ed -s list",
  "ex -s -c '!rm -rf victim' -c q list",
  "git submodule foreach 'rm -rf ../victim'",
  // Fourth attacker pass: builtins that evaluate subscripts or choose programs, functions in
  // the environment, git grep -O under `Execute(git*)`, a harmless -c hiding a pager.
  "hash -p /usr/bin/rm ls; ls -rf victim",
  "printf -v 'a[$(rm -rf victim)]' x",
  "read -r 'a[$(rm -rf victim)]' <<< x",
  "env 'BASH_FUNC_ls%%=() { rm -rf victim; }' bash -c ls",
  "git grep -O'rm -rf victim' -e keep",
  "git -c color.ui=never -c core.pager='rm -rf victim' log",
  // Fifth attacker pass: process-property wrappers, capsh, an unknown wrapper, make reading its
  // makefile from the input under `Execute(make*)`.
  "setarch x86_64 rm -rf victim",
  "linux64 sh -c 'rm -rf victim'",
  "choom -n 0 -- rm -rf victim",
  "uclampset -m 0 rm -rf victim",
  "capsh -- -c 'rm -rf victim'",
  "some-wrapper -- rm -rf victim",
  "make -f /dev/stdin <<< 'all:; rm -rf victim'",
];

Deno.test("auto-allow yields: headless on real bwrap, victim survives and the denials are reported", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await repo();
  try {
    // What the guard understands still runs unasked in the sandbox.
    const run = await headlessAttack(ws, ATTACKS, [{ id: "ok", command: "mkdir made && ls" }], [
      "--deny",
      "Execute(rm *)",
      "--allow",
      "Execute(find*)",
      "--allow",
      "Execute(git*)",
      "--allow",
      "Execute(make*)",
    ]);
    assert.equal(await Deno.readTextFile(join(ws, "victim", "keep.txt")), "keep\n");
    assert.deepEqual(run.denied, run.attackIds);
    assert.ok((await Deno.stat(join(ws, "made"))).isDirectory, "the understood command ran");
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
