/**
 * Fetch-before-use for tests that start an npm package in a child process (the real MCP servers of
 * tests/mcp_test.ts). A child that fills a cold Deno cache itself spends its start-up timeout
 * downloading and the test reads like a bug in the code under test; instead the test calls
 * {@link warmNpm} first, which runs `deno cache --quiet <specs>` once per test process and set of
 * specs, in the cache the children use (`DENO_DIR`, else Deno's default under `HOME`). Offline or
 * with the registry unreachable it throws one clear error naming the packages, the registry and
 * `deno cache`'s last lines, instead of a child's timeout. This is what makes the README's
 * `deno task test` pass on a machine whose cache is empty (issue 20); `.ci/run` adds no warm-up of
 * its own.
 * @module
 */

const warmed = new Map<string, Promise<void>>();

/**
 * Puts the npm packages `specs` (`npm:name@version`) in Deno's cache, once per process and set.
 * @throws Error when `deno cache` fails (message: the packages, the registry, its stderr's tail).
 */
export function warmNpm(...specs: string[]): Promise<void> {
  const key = specs.join(" ");
  let p = warmed.get(key);
  if (!p) {
    p = fetchNpm(specs);
    warmed.set(key, p);
  }
  return p;
}

async function fetchNpm(specs: string[]): Promise<void> {
  const out = await new Deno.Command("deno", {
    args: ["cache", "--quiet", "--no-config", ...specs],
    env: { DENO_NO_UPDATE_CHECK: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.success) return;
  const tail = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-5).join("\n");
  const registry = Deno.env.get("NPM_CONFIG_REGISTRY") ?? "https://registry.npmjs.org";
  throw new Error(
    `this test needs ${specs.join(", ")} in Deno's cache and could not fetch ${
      specs.length > 1 ? "them" : "it"
    } from ${registry} (offline? run \`deno cache ${specs.join(" ")}\` once with network): ` +
      (tail || `deno cache exited ${out.code}`),
  );
}
