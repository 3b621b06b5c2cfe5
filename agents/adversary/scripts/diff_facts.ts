/**
 * adversary: resolve the change under review, bounded in size. A ref or range named in the request
 * (`--base main`, `base: v1.2`, `a1b2c3..HEAD`, `HEAD~3`) wins; else staged changes, else unstaged
 * changes (untracked files included as new files), else the last commit (`HEAD~1`). Git runs
 * through execute_command (the guard and the OS sandbox apply). A failing git is a pipeline fault.
 */
type Exec = (command: string, opts?: { cwd?: string; timeout_ms?: number }) => Promise<{
  exit_code: number | null;
  stdout: string;
  stderr: string;
  denied?: string;
}>;

/** Characters of diff kept (the rest is cut per file, with a note). */
export const DIFF_LIMIT = 60_000;
const PER_FILE = 12_000;
const REF = String.raw`[A-Za-z0-9._/~^@{}-]+`;

/** The ref or range the request names, if any. */
export function namedRef(prompt: string): string | undefined {
  const range = prompt.match(
    new RegExp(String.raw`(?:^|\s|\`)(${REF}\.\.\.?${REF})(?=$|[\s\`.,;:)])`),
  );
  if (range) return range[1];
  for (
    const re of [
      new RegExp(String.raw`--base[= ](${REF})`),
      new RegExp(String.raw`\bbase(?: ref)?:\s*\x60?(${REF})`, "i"),
      new RegExp(String.raw`\bagainst\s+(?:ref\s+)?\x60?(${REF})`, "i"),
    ]
  ) {
    const m = prompt.match(re);
    if (m && !m[1].startsWith("-") && !/^(the|a|an|plan|spec|these|this|its)$/i.test(m[1])) {
      return m[1].replace(/[.,;:]$/, "");
    }
  }
  const head = prompt.match(/\b(HEAD(?:~\d+|\^+)?)\b/);
  return head && head[1] !== "HEAD" ? head[1] : undefined;
}

function q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Cuts each file's part of a unified diff to PER_FILE and the whole to DIFF_LIMIT. */
export function bound(diff: string): string {
  const parts = diff.split(/(?=^diff --git )/m);
  let out = "";
  for (const p of parts) {
    const piece = p.length > PER_FILE
      ? `${p.slice(0, PER_FILE)}\n[… ${p.length - PER_FILE} characters of this file's diff cut …]\n`
      : p;
    if (out.length + piece.length > DIFF_LIMIT) {
      out +=
        `\n[… diff cut at ${DIFF_LIMIT} characters; ${parts.length} files in all: read the files for the rest …]\n`;
      break;
    }
    out += piece;
  }
  return out;
}

export default async function diffFacts(
  state: Record<string, unknown>,
  ctx: { exec: Exec },
): Promise<Record<string, unknown>> {
  const cwd = String(state.project_dir ?? ".");
  const git = async (args: string) => {
    const r = await ctx.exec(`git --no-pager ${args}`, {
      cwd,
      timeout_ms: 60_000,
    });
    if (r.denied) throw new Error(`git ${args}: denied: ${r.denied}`);
    if (r.exit_code !== 0) {
      throw new Error(`git ${args} exited ${r.exit_code}: ${r.stderr.trim().slice(0, 500)}`);
    }
    return r.stdout;
  };
  await git("rev-parse --is-inside-work-tree");
  const ref = namedRef(String(state.initial_prompt ?? ""));
  let source: string, diff: string, files: string[];
  if (ref) {
    source = ref;
    diff = await git(`diff ${q(ref)}`);
    files = (await git(`diff --name-only ${q(ref)}`)).split("\n").filter(Boolean);
  } else {
    diff = await git("diff --cached");
    source = "staged";
    files = (await git("diff --cached --name-only")).split("\n").filter(Boolean);
    if (!diff.trim()) {
      diff = await git("diff");
      files = (await git("diff --name-only")).split("\n").filter(Boolean);
      source = "unstaged";
      const untracked = (await git("ls-files --others --exclude-standard")).split("\n").filter(
        Boolean,
      );
      for (const f of untracked) {
        const r = await ctx.exec(`git --no-pager diff --no-index -- /dev/null ${q(f)}`, {
          cwd,
          timeout_ms: 30_000,
        });
        if (r.denied) throw new Error(`git diff --no-index ${f}: denied: ${r.denied}`);
        diff += r.stdout;
        files.push(f);
      }
    }
    if (!diff.trim()) {
      const hasParent =
        (await ctx.exec("git rev-parse --verify -q HEAD~1", { cwd })).exit_code === 0;
      source = hasParent ? "HEAD~1" : "HEAD (the only commit)";
      diff = hasParent ? await git("diff HEAD~1 HEAD") : await git("show --format= HEAD");
      files = (hasParent
        ? await git("diff --name-only HEAD~1 HEAD")
        : await git("show --format= --name-only HEAD"))
        .split("\n").filter(Boolean);
    }
  }
  return { diff: bound(diff), diff_files: files, diff_source: source };
}
