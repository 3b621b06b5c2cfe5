/**
 * step-runner: pick the step to run from `<project_dir>/<plans_dir>/steps/NN-<slug>.md`.
 * `step: next` takes the first step whose front matter says `status: in-progress`, else the first
 * `pending` one whose `depends_on` steps all have a handoff with `result: complete`; a number
 * takes that step. The chosen step is marked `in-progress`. Also gathers the handoffs of its
 * dependencies, plans/NOTES.md and the step's "Test commands". Files are read and written through
 * fs_read / fs_write (the guard applies).
 */
type Ctx = {
  exec(
    command: string,
    opts?: { cwd?: string },
  ): Promise<{ exit_code: number | null; stdout: string; denied?: string }>;
  read(path: string): Promise<string | undefined>;
  write(path: string, text: string): Promise<void>;
};

export interface StepFile {
  file: string;
  name: string;
  step: number;
  title: string;
  status: string;
  depends_on: number[];
  text: string;
}

/** `key: value` lines of a `---` front matter block (the subset plan files use). */
export function frontMatter(text: string): Record<string, string> {
  const m = text.match(/^---\r?\n([\s\S]*?)\r?\n---/);
  const out: Record<string, string> = {};
  for (const line of m?.[1].split(/\r?\n/) ?? []) {
    const kv = line.match(/^([A-Za-z_][\w-]*):\s*(.*)$/);
    if (kv) out[kv[1]] = kv[2].trim().replace(/^["']|["']$/g, "");
  }
  return out;
}

export function parseStep(file: string, name: string, text: string): StepFile {
  const fm = frontMatter(text);
  const num = Number(fm.step ?? name.match(/^(\d+)/)?.[1] ?? NaN);
  const deps = (fm.depends_on ?? "").replace(/[[\]]/g, "").split(",").map((s) => s.trim()).filter(
    Boolean,
  )
    .map(Number);
  return {
    file,
    name,
    step: num,
    title: fm.title ?? name,
    status: fm.status ?? "pending",
    depends_on: deps,
    text,
  };
}

/** The lines of a `## <title>` section (fenced code lines, or bullet items). */
export function section(text: string, title: string): string {
  const re = new RegExp(`^#+\\s*${title}\\s*$([\\s\\S]*?)(?=^#+\\s|$(?![\\s\\S]))`, "im");
  return text.match(re)?.[1].trim() ?? "";
}

export function testCommands(text: string): string[] {
  const body = section(text, "Test commands");
  const fenced = body.match(/```[^\n]*\n([\s\S]*?)```/g);
  const lines = fenced
    ? fenced.flatMap((f) => f.replace(/```[^\n]*\n|```/g, "").split("\n"))
    : body.split("\n").map((l) => l.replace(/^\s*[-*]\s+/, "").replace(/^`|`$/g, ""));
  return lines.map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

function setStatus(text: string, status: string): string {
  return text.replace(/^(---\r?\n[\s\S]*?)^status:.*$/m, `$1status: ${status}`);
}

export default async function resolveStep(
  state: Record<string, unknown>,
  ctx: Ctx,
): Promise<Record<string, unknown>> {
  const root = `${String(state.project_dir ?? ".").replace(/\/$/, "")}/${
    state.plans_dir ?? "plans"
  }`;
  const ls = await ctx.exec(`ls -1 '${root}/steps'`);
  if (ls.exit_code !== 0) {
    return {
      resolve_message: `No plan repository: ${root}/steps/ does not exist.`,
      _next: "end_failed",
    };
  }
  const names = ls.stdout.split("\n").filter((n) => /\.md$/.test(n)).sort();
  const steps: StepFile[] = [];
  for (const name of names) {
    const file = `${root}/steps/${name}`;
    steps.push(parseStep(file, name, await ctx.read(file) ?? ""));
  }
  const handoff = async (s: StepFile) => await ctx.read(`${root}/handoffs/${s.name}`);
  const complete = new Set<number>();
  for (const s of steps) {
    const h = await handoff(s);
    if (h && frontMatter(h).result === "complete") complete.add(s.step);
  }
  let chosen: StepFile | undefined;
  const want = String(state.step ?? "next");
  if (want !== "next") {
    chosen = steps.find((s) => s.step === Number(want));
    if (!chosen) {
      return { resolve_message: `No step ${want} in ${root}/steps/.`, _next: "end_failed" };
    }
  } else {
    chosen = steps.find((s) => s.status === "in-progress");
    if (!chosen) {
      const pending = steps.filter((s) => s.status === "pending" && !complete.has(s.step));
      if (!pending.length) {
        return {
          resolve_message: `All ${steps.length} steps of ${root} are complete.`,
          _next: "end_done",
        };
      }
      chosen = pending.find((s) => s.depends_on.every((d) => complete.has(d)));
      if (!chosen) {
        const waits = pending.map((s) =>
          `step ${s.step} waits for ${s.depends_on.filter((d) => !complete.has(d)).join(", ")}`
        );
        return {
          resolve_message: `No step can start: ${
            waits.join("; ")
          } (a dependency needs a handoff with result: complete).\n`,
          _next: "end_blocked",
        };
      }
    }
  }
  if (chosen.status !== "in-progress") {
    await ctx.write(chosen.file, setStatus(chosen.text, "in-progress"));
  }
  const prior: string[] = [];
  for (const d of chosen.depends_on) {
    const s = steps.find((x) => x.step === d);
    const h = s && await handoff(s);
    if (h) prior.push(`--- handoff of step ${d} ---\n${h.slice(0, 8000)}`);
  }
  return {
    step_file: chosen.file,
    step_number: chosen.step,
    step_title: chosen.title,
    step_text: chosen.text.slice(0, 30_000),
    handoff_file: `${root}/handoffs/${chosen.name}`,
    prior_handoffs: prior.join("\n\n") || "(none)",
    notes: (await ctx.read(`${root}/NOTES.md`) ?? "(none)").slice(0, 8000),
    test_commands: testCommands(chosen.text),
    resolve_message: "",
    _next: "orient",
  };
}
