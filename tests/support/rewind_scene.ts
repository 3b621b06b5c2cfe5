/**
 * The scene of the checkpoint and rewind tests (issue 18): a real git repository with text,
 * binary, executable, to-be-renamed and gitignored files, a scripted turn that changes it with
 * file tools and with `rm -rf src` in `execute_command`, and a byte-for-byte snapshot of a tree.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "./model_server.ts";

/** Runs git in `cwd` (the user's own repository); returns stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const o = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!o.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
  return new TextDecoder().decode(o.stdout);
}

/**
 * A workspace under /var/tmp (the sandbox hides /tmp) that is a git repository with one commit:
 * `README.md`, `src/a.ts`, `src/deep/b.ts`, `src/logo.bin` (binary), `run.sh` (executable),
 * `old.txt`, `data.bin`, CRLF text with a `.gitattributes` that would convert it, and an ignored
 * `build/out.txt`.
 */
export async function makeRepo(prefix = "coyote-rewind-"): Promise<string> {
  const base = await Deno.stat("/var/tmp").then(() => "/var/tmp", () => undefined);
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix, dir: base }));
  const w = (p: string, c: string | Uint8Array) => {
    Deno.mkdirSync(join(dir, p, ".."), { recursive: true });
    typeof c === "string"
      ? Deno.writeTextFileSync(join(dir, p), c)
      : Deno.writeFileSync(join(dir, p), c);
  };
  w("README.md", "# demo\n\nline two\n");
  w("src/a.ts", "export const a = 1;\r\nexport const b = 2;\r\n");
  w("src/deep/b.ts", "export const deep = true;\n");
  const logo = new Uint8Array(4096);
  for (let i = 0; i < logo.length; i++) logo[i] = (i * 131 + 7) % 256;
  w("src/logo.bin", logo);
  w("run.sh", "#!/bin/sh\necho hi\n");
  Deno.chmodSync(join(dir, "run.sh"), 0o755);
  w("old.txt", "a file that the turn renames; long enough for rename detection\n");
  w("data.bin", new Uint8Array([0, 255, 1, 254, 13, 10, 0]));
  w(".gitattributes", "*.ts text eol=lf\n");
  w(".gitignore", "build/\n");
  w("build/out.txt", "ignored build output\n");
  await git(dir, "init", "-q");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "init");
  return dir;
}

/** `path → kind:exec-bits:sha256` of every file under `dir` but `.git/`. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(join(dir, rel))) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === ".git") continue;
      const st = await Deno.lstat(join(dir, p));
      if (st.isDirectory) {
        await walk(p);
        continue;
      }
      const bytes = st.isSymlink
        ? new TextEncoder().encode(await Deno.readLink(join(dir, p)))
        : await Deno.readFile(join(dir, p));
      const h = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      out[p] = `${st.isSymlink ? "link" : "file"}:${(st.mode ?? 0) & 0o111}:${
        [...h].map((b) => b.toString(16).padStart(2, "0")).join("")
      }`;
    }
  };
  await walk("");
  return out;
}

/** The user's repository state that must never change: index bytes, HEAD, refs. */
export async function userGitState(dir: string): Promise<string> {
  const index = await Deno.readFile(join(dir, ".git", "index"));
  const h = new Uint8Array(await crypto.subtle.digest("SHA-256", index));
  return `${[...h].join(",")} ${await git(dir, "rev-parse", "HEAD")} ${await git(
    dir,
    "for-each-ref",
  )}`;
}

/**
 * The scripted turn: `fs_write` a new file, `fs_patch` README.md, then one `execute_command`
 * that runs `rm -rf src`, renames `old.txt`, drops the executable bit of `run.sh`, rewrites
 * `data.bin` and adds a file under the ignored `build/`; then "done".
 */
export function changingTurn(): ScriptedReply[] {
  return [
    {
      tool_calls: [
        { id: "w1", name: "fs_write", arguments: { path: "notes/new.txt", content: "new\n" } },
        {
          id: "p1",
          name: "fs_patch",
          arguments: { path: "README.md", old_string: "line two", new_string: "line 2" },
        },
      ],
    },
    {
      tool_calls: [{
        id: "x1",
        name: "execute_command",
        arguments: {
          command:
            "rm -rf src && mv old.txt renamed.txt && chmod -x run.sh && printf 'zz' > data.bin && echo more > build/more.txt",
        },
      }],
    },
    { text: "done" },
  ];
}

/** Asserts the turn's changes landed (so that a rewind has something to undo). */
export async function assertChanged(dir: string): Promise<void> {
  const exists = (p: string) => Deno.stat(join(dir, p)).then(() => true, () => false);
  assert.equal(await exists("src"), false, "rm -rf src ran");
  assert.equal(await exists("renamed.txt"), true, "mv ran");
  assert.equal(await Deno.readTextFile(join(dir, "notes/new.txt")), "new\n");
  assert.match(await Deno.readTextFile(join(dir, "README.md")), /line 2/);
}

/** The summary lines a rewind of {@link changingTurn} shows before restoring. */
export const RESTORE_LINES = [
  /added\s+src\/a\.ts/,
  /added\s+src\/logo\.bin/,
  /deleted\s+notes\/new\.txt/,
  /modified\s+README\.md/,
  /modified\s+data\.bin/,
  /renamed\s+renamed\.txt → old\.txt/,
  /modified\s+run\.sh \(mode 100644 → 100755\)/,
];

/**
 * After a rewind: the tree is the snapshot `before` plus the ignored file the command made
 * (ignored files are not checkpointed, so not removed).
 */
export async function assertRestored(dir: string, before: Record<string, string>): Promise<void> {
  const now = await snapshot(dir);
  const { ["build/more.txt"]: more, ...rest } = now;
  assert.ok(more, "the ignored build/more.txt stays (not checkpointed)");
  assert.deepEqual(rest, before);
}
