/**
 * The real ast-grep program for tests of the `ast_grep` tool (plugins/fs/ast_grep.ts): npm
 * `@ast-grep/cli` (pinned {@link AST_GREP_VERSION}) put in Deno's npm cache by
 * tests/support/warm_cache.ts `warmNpm` — its per-platform package (`@ast-grep/cli-<platform>`)
 * ships the executable — and the folder holding it, to put first on a child's PATH.
 * @throws Error when the platform has no such package or the fetch fails.
 * @module
 */
import { join } from "node:path";
import { warmNpm } from "./warm_cache.ts";

/** The @ast-grep/cli version the tests run. */
export const AST_GREP_VERSION = "0.51.1";

/** `cli-<platform>` of `@ast-grep/` for this machine. */
function platformPackage(): string {
  const arch = Deno.build.arch === "x86_64" ? "x64" : "arm64";
  if (Deno.build.os === "linux") return `cli-linux-${arch}-gnu`;
  if (Deno.build.os === "darwin") return `cli-darwin-${arch}`;
  throw new Error(`no @ast-grep/cli package for ${Deno.build.os}`);
}

let dir: Promise<string> | undefined;

/** The folder holding the `ast-grep` executable (fetched once per test process). */
export function astGrepDir(): Promise<string> {
  return dir ??= (async () => {
    await warmNpm(`npm:@ast-grep/cli@${AST_GREP_VERSION}`);
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout)) as { npmCache: string };
    const found = join(
      npmCache,
      "registry.npmjs.org/@ast-grep",
      platformPackage(),
      AST_GREP_VERSION,
    );
    await Deno.stat(join(found, "ast-grep"));
    return found;
  })();
}
