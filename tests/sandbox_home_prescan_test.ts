/**
 * The home view's store scan in a helper process (core/policy/sandbox/home_prescan.ts, issue 22
 * peak RSS): the helper's findings are what the in-process scan finds, the home view takes them
 * without scanning again, the helper keeps the cache file, and a reply that is not what the
 * request asked for changes nothing (the view then scans in-process). The last test runs the
 * helper under exactly its `deno run` flags: it cannot write outside the data dir.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  homeScanCommand,
  isHomeScanReply,
  prescanHome,
} from "../core/policy/sandbox/home_prescan.ts";
import { recentScan } from "../core/policy/sandbox/home_scan.ts";
import { homeView, storeSources } from "../core/policy/sandbox/home_view.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

/** A home with two stores (`~/.cache`, `~/.npm`) holding a token file, a browser profile and a clone's token URL. */
async function fakeHome(): Promise<{ root: string; home: string; data: string }> {
  const root = await Deno.makeTempDir({ prefix: "coyote-prescan-" });
  const home = join(root, "home");
  const data = join(root, "data");
  await Deno.mkdir(join(home, ".cache", "huggingface"), { recursive: true });
  await Deno.writeTextFile(join(home, ".cache", "huggingface", "token"), "hf_abc\n");
  const profile = join(home, ".cache", "ms-playwright", "chromium-1105", "Default");
  await Deno.mkdir(profile, { recursive: true });
  await Deno.writeTextFile(join(profile, "Cookies"), "");
  const clone = join(home, ".npm", "_git", "pkg", ".git");
  await Deno.mkdir(clone, { recursive: true });
  await Deno.writeTextFile(
    join(clone, "config"),
    '[remote "origin"]\n\turl = https://user:ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@github.com/o/r\n',
  );
  await Deno.writeTextFile(join(home, ".cache", "plain.txt"), "nothing here\n");
  return { root, home: await Deno.realPath(home), data };
}

const noEnv = () => undefined;

Deno.test("home prescan: the helper's findings are the scan's; the view takes them; the cache file is the helper's", async () => {
  const { root, home, data } = await fakeHome();
  // Past the scan's 2 s racy window: folders just made are not kept in the cache file.
  await new Promise((r) => setTimeout(r, 2100));
  try {
    const stores = storeSources(home, noEnv);
    assert.deepEqual(stores, [join(home, ".cache"), join(home, ".npm")]);
    assert.equal(recentScan(stores[0]), undefined, "nothing scanned in this process yet");
    assert.equal(await prescanHome(home, data, noEnv), true);
    assert.deepEqual(recentScan(stores[0])?.toSorted(), [
      "huggingface/token",
      "ms-playwright/chromium-1105/Default",
    ]);
    assert.deepEqual(recentScan(stores[1]), ["_git/pkg/.git/config"]);
    assert.ok((await Deno.stat(join(data, "home-scan.json"))).isFile, "the helper wrote the cache");
    // The view mounts what the helper found (paths as the command names them).
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    const view = homeView(home, ws, [ws], noEnv, data)!;
    assert.deepEqual(view.hidden.toSorted(), [
      `${home}/.cache/huggingface/token`,
      `${home}/.cache/ms-playwright/chromium-1105/Default`,
      `${home}/.npm/_git/pkg/.git/config`,
    ]);
    // Fresh findings: a second call starts no helper and resolves at once.
    const t0 = performance.now();
    assert.equal(await prescanHome(home, data, noEnv), true);
    assert.ok(performance.now() - t0 < 5, "no second helper while the findings are fresh");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("home prescan: a reply is taken only when it answers the request (every store, relative paths)", () => {
  const stores = ["/h/.cache", "/h/.npm"];
  assert.ok(isHomeScanReply({ found: { "/h/.cache": ["a/token"], "/h/.npm": [] } }, stores));
  for (
    const bad of [
      null,
      "ok",
      { found: { "/h/.cache": ["a"] } }, // a store missing: it would be shown unscanned
      { found: { "/h/.cache": ["/etc/passwd"], "/h/.npm": [] } }, // absolute
      { found: { "/h/.cache": [""], "/h/.npm": [] } }, // the whole store
      { found: { "/h/.cache": [1], "/h/.npm": [] } },
      { found: { "/h/.cache": "a", "/h/.npm": [] } },
    ]
  ) assert.equal(isHomeScanReply(bad, stores), false, JSON.stringify(bad));
});

Deno.test("home prescan: the helper under its own flags reads the stores, writes only the data dir", async () => {
  const { root, home, data } = await fakeHome();
  try {
    const { cmd, args } = homeScanCommand(data);
    assert.ok(args.includes("--allow-read") && args.includes(`--allow-write=${data}`));
    assert.ok(!args.some((a) => /^--allow-(net|env|run|ffi|sys|all)|^-A$/.test(a)), args.join(" "));
    const run = async (cacheDir: string) => {
      const c = new Deno.Command(cmd, {
        args,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const w = c.stdin.getWriter();
      await w.write(
        new TextEncoder().encode(JSON.stringify({ stores: [join(home, ".cache")], cacheDir })),
      );
      await w.close();
      return await c.output();
    };
    const ok = await run(data);
    assert.equal(ok.code, 0, new TextDecoder().decode(ok.stderr));
    const reply = JSON.parse(new TextDecoder().decode(ok.stdout));
    assert.deepEqual(reply.found[join(home, ".cache")].toSorted(), [
      "huggingface/token",
      "ms-playwright/chromium-1105/Default",
    ]);
    // A cache dir outside its write grant: the scan still answers, the file is not written.
    const elsewhere = join(root, "elsewhere");
    const out = await run(elsewhere);
    assert.equal(out.code, 0);
    await assert.rejects(Deno.stat(join(elsewhere, "home-scan.json")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Processes whose command line contains `needle` (this machine's /proc). */
function processesWith(needle: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      if (cmd.includes(needle)) out.push(`${e.name}: ${cmd}`);
    } catch { /* gone */ }
  }
  return out;
}

Deno.test("home prescan: a session that ends while the helper still scans leaves no helper behind", async () => {
  const { root, home } = await fakeHome();
  // A store big enough that the cold scan outlasts the session (≈ 4000 folders).
  for (let i = 0; i < 400; i++) {
    await Deno.mkdir(join(home, ".cache", "big", `d${i}`, "a", "b", "c", "e", "f", "g", "h", "i"), {
      recursive: true,
    });
  }
  const env = await makeCoyoteEnv();
  // The model answers once the helper is running (started 60 ms after the request is out), so
  // the session ends while it still starts or scans.
  const helper = `--allow-write=${env.dataDir}`;
  let seen: string[] = [];
  const server = await startModelServer({
    script: async () => {
      for (let i = 0; i < 500 && !seen.length; i++) {
        seen = processesWith(helper);
        await new Promise((r) => setTimeout(r, 2));
      }
      return { text: "done" };
    },
  });
  try {
    const r = await runCoyote(["--headless", "--output-format", "json", "hello"], {
      cwd: root,
      env: childEnv(env, { baseURL: server.baseURL, extra: { HOME: home } }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).text, "done");
    assert.equal(seen.length, 1, "the helper ran while the model answered");
    assert.deepEqual(processesWith(helper), [], "no helper left running");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(root, { recursive: true });
  }
});
