/**
 * A real pseudo-terminal for REPL tests: one tmux session (own socket) running a command;
 * send keys, read the screen, wait for text to appear. tmux must be installed (`.ci/run`
 * installs it).
 * @module
 */

/** One tmux-driven terminal. */
export class Tmux {
  readonly socket: string;
  readonly name = "t";
  constructor() {
    this.socket = `coyote-test-${crypto.randomUUID().slice(0, 8)}`;
  }

  async #tmux(...args: string[]): Promise<string> {
    const o = await new Deno.Command("tmux", {
      args: ["-L", this.socket, ...args],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    if (!o.success) {
      throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(o.stderr)}`);
    }
    return new TextDecoder().decode(o.stdout);
  }

  /**
   * Starts `argv` in a new session of `width`×`height` in `cwd` with exactly `env`. When the
   * command ends, the pane prints `[exited N]` and stays.
   */
  async start(
    argv: string[],
    opts: { cwd: string; env: Record<string, string>; width?: number; height?: number },
  ): Promise<void> {
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const envs = Object.entries({ TERM: "xterm-256color", ...opts.env }).map(([k, v]) =>
      `${k}=${q(v)}`
    );
    const line = `cd ${q(opts.cwd)} && env -i ${envs.join(" ")} ${
      argv.map(q).join(" ")
    }; echo "[exited $?]"; sleep 600`;
    await this.#tmux(
      "new-session",
      "-d",
      "-s",
      this.name,
      "-x",
      String(opts.width ?? 120),
      "-y",
      String(opts.height ?? 50),
      "bash",
      "-c",
      line,
    );
  }

  /** Types literal text (no Enter). */
  async type(text: string): Promise<void> {
    await this.#tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Sends tmux key names (`Enter`, `C-c`, `C-d`, `Tab`, `M-Enter`). */
  async keys(...keys: string[]): Promise<void> {
    await this.#tmux("send-keys", "-t", this.name, ...keys);
  }

  /** Resizes the window (the program gets SIGWINCH; tmux reflows wrapped lines). */
  async resize(width: number, height: number): Promise<void> {
    await this.#tmux("resize-window", "-t", this.name, "-x", String(width), "-y", String(height));
  }

  /** The screen and scroll-back as plain text. */
  async screen(): Promise<string> {
    return await this.#tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", this.name);
  }

  /**
   * Waits until the screen matches `re` (polling); throws with the screen after `timeoutMs`.
   * A liveness bound, not a timing assertion.
   */
  async waitFor(re: RegExp, timeoutMs = 30_000): Promise<string> {
    return await this.waitUntil((s) => re.test(s), String(re), timeoutMs);
  }

  /**
   * Waits until `re` occurs at least `n` times on the screen and scroll-back (a prompt shown
   * for the n-th time); throws with the screen after `timeoutMs`.
   */
  async waitForCount(re: RegExp, n: number, timeoutMs = 30_000): Promise<string> {
    const g = new RegExp(re.source, re.flags.includes("g") ? re.flags : re.flags + "g");
    return await this.waitUntil(
      (s) => (s.match(g)?.length ?? 0) >= n,
      `${re} ${n} time(s)`,
      timeoutMs,
    );
  }

  /** Waits until `test(screen)` holds (polling); throws naming `what`, with the screen. */
  async waitUntil(
    test: (screen: string) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<string> {
    const end = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < end) {
      last = await this.screen();
      if (test(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`screen never matched ${what}:\n${last}`);
  }

  async kill(): Promise<void> {
    await this.#tmux("kill-server").catch(() => {});
  }
}
