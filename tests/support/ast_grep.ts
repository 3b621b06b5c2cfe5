/**
 * The real ast-grep program for tests of the `ast_grep` tool (plugins/fs/ast_grep.ts): npm
 * `@ast-grep/cli` (pinned {@link AST_GREP_VERSION}) fetched into Deno's npm cache with
 * `deno cache` — its per-platform package ships the executable — and the folder holding it, to
 * put first on a child's PATH. Throws when the platform has no such package or the fetch fails.
 * @module
 */
import { join } from "node:path";

/** The @ast-grep/cli version the tests run. */
export const AST_GREP_VERSION = "0.51.1";

/** `@ast-grep/cli-<platform>` for this machine. */
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
    const tmp = await Deno.makeTempDir({ prefix: "coyote-astgrep-" });
    try {
      const entry = join(tmp, "fetch.ts");
      await Deno.writeTextFile(
        entry,
        `import "npm:@ast-grep/cli@${AST_GREP_VERSION}/package.json" with { type: "json" };\n`,
      );
      const cache = await new Deno.Command(Deno.execPath(), {
        args: ["cache", "--quiet", "--no-config", "--no-lock", entry],
        cwd: tmp,
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!cache.success) {
        throw new Error(`deno cache @ast-grep/cli: ${new TextDecoder().decode(cache.stderr)}`);
      }
      const info = await new Deno.Command(Deno.execPath(), {
        args: ["info", "--json"],
        stdout: "piped",
        stderr: "null",
      }).output();
      const npmCache = JSON.parse(new TextDecoder().decode(info.stdout)).npmCache as string;
      const found = join(
        npmCache,
        "registry.npmjs.org/@ast-grep",
        platformPackage(),
        AST_GREP_VERSION,
      );
      await Deno.stat(join(found, "ast-grep"));
      return found;
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  })();
}
