/**
 * Reading graph files written for the original Coyote (shared/reference R4; docs/graphs.md
 * "Migrating from the original Coyote"). Runs on the parsed YAML before the schema check and
 * rewrites the original's spellings to this Coyote's, so those files load and run:
 *
 * - per-node `id:` equal to its key is dropped (a different value is a problem);
 * - top-level `global_tools` (`fs_cat.sh` file names) joins `tools` as tool names (`fs_cat` and
 *   `ast_grep` are tools here too: plugins/fs/cat.ts, ast_grep.ts);
 * - the original's URL readers `fetch_url_via_curl` / `fetch_url_via_jina` are read as `web_fetch`
 *   (same one argument, `url`; the page as text);
 * - a script without `routes` (routed through the `_next` it prints, with or without `next`) gets
 *   `routes` from the node ids its file's text names (R4: any script's `_next` routes);
 * - `settings.validate_before_run: true` is dropped (this Coyote always validates).
 *
 * What cannot be supported is never dropped silently: it becomes a warning (the run goes on
 * without it) or a problem (the graph does not load), each naming the file, the key and what to
 * do instead: `rag` nodes, `.py` scripts, skill keys (`skills_enabled`, `enabled_skills`,
 * `inject_skill_instructions`, `skill_instructions`; top-level or per node), `validate_before_run: false`. Pure except for `readScript`.
 * @module
 */

/** The original's tool names that map to one of this Coyote's (same arguments). */
export const TOOL_ALIASES: Record<string, string> = {
  fetch_url_via_curl: "web_fetch",
  fetch_url_via_jina: "web_fetch",
};

/**
 * Tools of the original this Coyote has no counterpart for, with what to use instead (a warning,
 * the tool left out). None at present: `fs_cat` and `ast_grep` exist; any other function script
 * is "no tool … in this workspace" (core/graph/validate.ts, core/agents/registry.ts).
 */
export const UNAVAILABLE_TOOLS: Record<string, string> = {};

/** Why a graph's skill lists (top-level or per node) are dropped, and what to do instead. */
/** The original's skill keys of a graph (top level or per node; R4), none of which applies here. */
const SKILL_KEYS = [
  "skills_enabled",
  "enabled_skills",
  "inject_skill_instructions",
  "skill_instructions",
] as const;

const SKILLS_NOTE =
  "skills are not loaded into a graph's llm nodes in this Coyote; ignored (put what the skill says in the node's instructions, or give the work to an agent node whose agent enables the skill)";

/** The result: the rewritten data, warnings (loaded anyway) and problems (not loaded). */
export interface CompatResult {
  data: unknown;
  warnings: string[];
  problems: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

/** `fs_cat.sh` → `fs_cat`; `fetch_url_via_curl.sh` → `web_fetch`. */
function toolName(t: string): string {
  const bare = t.replace(/\.(sh|py|js|ts)$/, "");
  return TOOL_ALIASES[bare] ?? bare;
}

/** Node ids named in a script's text as whole words (`"_next": "implement"` → implement). */
export function idsNamedIn(text: string, ids: string[], self: string): string[] {
  return ids.filter((id) =>
    id !== self &&
    new RegExp(`(^|[^A-Za-z0-9_-])${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^A-Za-z0-9_-])`)
      .test(text)
  );
}

/**
 * Rewrites the original Coyote's graph spellings (see the module doc).
 * @param file the graph.yaml path, named in every warning (`FILE: nodes.x.id: …`)
 * @param readScript a script's text by its path relative to the graph's folder, or undefined
 */
export function fromOriginal(
  raw: unknown,
  file: string,
  readScript: (rel: string) => string | undefined = () => undefined,
): CompatResult {
  const warnings: string[] = [];
  const problems: string[] = [];
  if (!isObj(raw)) return { data: raw, warnings, problems };
  const data: Obj = { ...raw };
  const warn = (key: string, what: string) => warnings.push(`${file}: ${key}: ${what}`);

  // Tools: the original's global_tools name files; both lists become tool names.
  const universe: string[] = [];
  for (const k of ["tools", "global_tools"] as const) {
    const list = data[k];
    if (!Array.isArray(list)) continue;
    for (const [i, t] of list.entries()) {
      if (typeof t !== "string") {
        universe.push(t);
        continue;
      }
      const name = toolName(t);
      if (UNAVAILABLE_TOOLS[name]) {
        warn(`${k}[${i}]`, `"${t}" is ${UNAVAILABLE_TOOLS[name]}; left out`);
        continue;
      }
      if (!universe.includes(name)) universe.push(name);
    }
  }
  if ("global_tools" in data || "tools" in data) data.tools = universe;
  delete data.global_tools;

  const topSkills = SKILL_KEYS.filter((k) => k in data);
  if (topSkills.length) {
    warn(topSkills.join("/"), SKILLS_NOTE);
    for (const k of topSkills) delete data[k];
  }
  if (isObj(data.settings) && "validate_before_run" in data.settings) {
    const s = { ...data.settings };
    if (s.validate_before_run === false) {
      warn("settings.validate_before_run", "false is not supported; graphs are always validated");
    }
    delete s.validate_before_run;
    data.settings = s;
  }

  if (!isObj(data.nodes)) return { data, warnings, problems };
  const ids = Object.keys(data.nodes);
  const nodes: Obj = {};
  for (const [nid, n] of Object.entries(data.nodes)) {
    if (!isObj(n)) {
      nodes[nid] = n;
      continue;
    }
    const node: Obj = { ...n };
    const at = `nodes.${nid}`;
    if ("id" in node) {
      if (node.id !== nid) {
        problems.push(
          `${at}.id: "${
            String(node.id)
          }" differs from its key "${nid}"; the key is the node's id (remove \`id\` or make them equal)`,
        );
      }
      delete node.id;
    }
    if (node.type === "rag") {
      problems.push(
        `${at}.type: "rag" nodes are not supported (this Coyote has no document index or embeddings); replace it with an llm node whose tools are fs_grep and fs_read over the documents, or a script node that searches them`,
      );
    }
    if (node.type === "script" && typeof node.script === "string" && node.script.endsWith(".py")) {
      const base = node.script.split("/").pop();
      problems.push(
        `${at}.script: "${node.script}": Python scripts are not run by this Coyote (scripts are .ts, .js, .mjs or .sh); wrap it in a .sh script beside it that runs \`python3 "$(dirname "$0")/${base}"\` (GRAPH_STATE is passed through), or port it`,
      );
    }
    const skillKeys = SKILL_KEYS.filter((k) => k in node);
    if (skillKeys.length) {
      warn(
        `${at}.${skillKeys.join("/")}`,
        SKILLS_NOTE,
      );
      for (const k of skillKeys) delete node[k];
    }
    if (Array.isArray(node.tools)) {
      const kept: unknown[] = [];
      for (const [i, t] of node.tools.entries()) {
        const name = typeof t === "string" ? toolName(t) : t;
        if (typeof name === "string" && UNAVAILABLE_TOOLS[name]) {
          warn(`${at}.tools[${i}]`, `"${name}" is ${UNAVAILABLE_TOOLS[name]}; left out`);
        } else if (!kept.includes(name)) kept.push(name);
      }
      node.tools = kept;
    }
    if (node.type === "script" && !("routes" in node) && typeof node.script === "string") {
      // The original lets any script's `_next` override its `next`: the ids its file names are
      // where it can go (the validator's reachability needs them; the runner then checks them).
      const text = readScript(node.script);
      const declared = typeof node.next === "string" ? [node.next] : [];
      const routes = text === undefined
        ? []
        : idsNamedIn(text, ids, nid).filter((r) => !declared.includes(r));
      if (routes.length) node.routes = routes;
    }
    nodes[nid] = node;
  }
  data.nodes = nodes;
  return { data, warnings, problems };
}
