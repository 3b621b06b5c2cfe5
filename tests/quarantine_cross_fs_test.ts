/**
 * Quarantine across file systems (core/policy/sandbox/cleanup.ts): a workspace on the disk and a
 * data dir on a tmpfs (`/dev/shm`), so rename(2) fails with EXDEV and the entry is copied (links
 * as links, contents kept) and removed — without node:fs, which is kept off the start path.
 */
import assert from "node:assert/strict";
import { quarantine } from "../core/policy/sandbox/cleanup.ts";

const fsOf = (p: string) =>
  new TextDecoder().decode(
    new Deno.Command("stat", { args: ["-f", "-c", "%T", p] }).outputSync().stdout,
  )
    .trim();

Deno.test("quarantine: across file systems an entry is copied whole (symlinks as links) and removed", () => {
  // /tmp, or the checkout where /tmp is a tmpfs too.
  const dir = fsOf("/tmp") === fsOf("/dev/shm") ? Deno.cwd() : "/tmp";
  const ws = Deno.makeTempDirSync({ dir, prefix: ".coyote-qws-" });
  const data = Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "coyote-qdata-" });
  try {
    assert.notEqual(fsOf(ws), fsOf(data), "the test needs two file systems (disk and /dev/shm)");
    Deno.mkdirSync(`${ws}/.planted/sub`, { recursive: true });
    Deno.writeTextFileSync(`${ws}/.planted/sub/run.sh`, "echo planted\n", { mode: 0o755 });
    Deno.symlinkSync("/etc/passwd", `${ws}/.planted/link`);
    const dest = quarantine(`${ws}/.planted`, ws, data, "q1");
    assert.equal(dest, `${data}/quarantine/q1/.planted`);
    assert.equal(Deno.readTextFileSync(`${dest}/sub/run.sh`), "echo planted\n");
    assert.equal((Deno.statSync(`${dest}/sub/run.sh`).mode ?? 0) & 0o777, 0o755);
    assert.equal(Deno.readLinkSync(`${dest}/link`), "/etc/passwd");
    assert.throws(() => Deno.lstatSync(`${ws}/.planted`), Deno.errors.NotFound);
  } finally {
    Deno.removeSync(ws, { recursive: true });
    Deno.removeSync(data, { recursive: true });
  }
});
