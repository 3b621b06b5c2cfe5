/**
 * Issue 16 class 2 gaps C and D.
 *
 * C (core/tools/secret_keys.ts; docs/permissions.md "The host root inside the sandbox"): a
 * line assigning a key whose words name a secret is masked in `/etc` (and judged so in the
 * home's stores and the environment), whatever the spelling — `aws_secret_access_key`,
 * WireGuard `PrivateKey`/`PresharedKey`, `*_pass`/`*_passwd`, `secret`, `psk`,
 * `wpa_passphrase`, `client_secret`, `api_key`/`apikey`/`apiKey` — in ini, YAML, JSON and env
 * forms, on realistic files; the settings about a secret (`PasswordAuthentication`,
 * `PASS_MAX_DAYS`, nsswitch's `passwd:`, `PublicKey`, `password_file`) are left alone.
 *
 * D (core/policy/sandbox/env.ts `daemonPointer`; "Unix sockets"): socket-shaped variables do
 * not enter the sandbox — by name shape (`SWAYSOCK`, `I3SOCK`, `TMUX`, `TMUX_PANE`,
 * `GPG_AGENT_INFO`, `WAYLAND_DISPLAY`, `KITTY_LISTEN_ON`, `*_IPC_*`, `*LISTEN*`) and by value
 * (`unix:` addresses, abstract `@/…` names, any path part that is a socket on the host or lies
 * in the runtime dir) — while thirty-odd ordinary variables of a developer machine pass. On
 * real bwrap, the launcher and a headless session with the guard forced open.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { MASK, maskCredentialLines } from "../core/policy/sandbox/secret_lines.ts";
import { scanEtc } from "../core/policy/sandbox/root_view.ts";
import { etcCredentialFiles, type FileStamp } from "../core/policy/sandbox/secret_lines.ts";
import { keyWords } from "../core/tools/secret_keys.ts";
import { commandEnvironment, daemonPointer } from "../core/policy/sandbox/env.ts";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend, sandboxedCommand } from "../core/policy/sandbox/mod.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const S = "Q7rZ2lM9xV4kP1wT8yB3";
const WGKEY = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=";

/** Realistic files: each line holding `S` (or the WireGuard key) must go, every other must stay. */
const FILES: Record<string, string> = {
  "wireguard/wg0.conf":
    `[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = ${WGKEY}\nListenPort = 51820\n\n[Peer]\nPublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=\nPresharedKey = /UwcSPg38hW/D9Y3tcS1FOV0K1wuURMbS0sesJEP5ak=\nEndpoint = vpn.example.com:51820\nAllowedIPs = 0.0.0.0/0\n`,
  "NetworkManager/system-connections/Home.nmconnection":
    `[connection]\nid=Home\ntype=wifi\n\n[wifi]\nssid=Home\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=${S}\n\n[802-1x]\neap=peap;\nidentity=ada\npassword=${S}\nprivate-key-password=${S}\n`,
  "wpa_supplicant/wpa_supplicant.conf":
    `ctrl_interface=/run/wpa_supplicant\nnetwork={\n\tssid="Home"\n\tpsk="${S} with spaces"\n\tkey_mgmt=WPA-PSK\n}\nnetwork={\n\tssid="Work"\n\tpassword="${S}"\n}\n`,
  "hostapd/hostapd.conf":
    `interface=wlan0\nssid=ap\nwpa=2\nwpa_passphrase=${S}\nwpa_key_mgmt=WPA-PSK\n`,
  "aws/credentials":
    `[default]\naws_access_key_id = AKIAEXAMPLEEXAMPLE12\naws_secret_access_key = ${S}\nregion = eu-west-1\n`,
  "app/config.ini": `[db]\nhost = db.local\nuser = app\ndb_pass = ${S}\nsmtp_passwd=${S}\n`,
  "app/config.yaml":
    `oauth:\n  client_id: coyote\n  client_secret: ${S}\n  token_url: https://auth.example/token\napi:\n  apiKey: ${S}\n  password_file: /run/secrets/pw\n`,
  "app/config.json":
    `{"name":"svc","api_key":"${S}","apikey":"${S}","timeout":30,"secret":"${S}"}\n`,
  "app/env": `export LOG_LEVEL=info\nexport ADMIN_PASS=${S}\nSTRIPE_SECRET=${S}\n`,
  "ssh/sshd_config":
    "PasswordAuthentication no\nPubkeyAuthentication yes\nKbdInteractiveAuthentication no\n",
  "login.defs": "PASS_MAX_DAYS\t99999\nPASS_MIN_DAYS\t0\nPASS_WARN_AGE\t7\n",
  "nsswitch.conf": "passwd:         files systemd\ngroup:          files\nshadow:         files\n",
  "pam.d/common-password": "password\t[success=1 default=ignore]\tpam_unix.so obscure yescrypt\n",
  "app/tool.conf":
    "auth = plain\nauth_method = scram-sha-256\nmax_tokens = 4096\ntoken_expiry = 3600\nsecret = ${SECRET_FROM_ENV}\n",
};

Deno.test("secret keys: a key's words name the secret (snake, kebab, camel, glued)", () => {
  assert.deepEqual(keyWords("aws_secret_access_key"), ["aws", "secret", "access", "key"]);
  assert.deepEqual(keyWords("PrivateKey"), ["private", "key"]);
  assert.deepEqual(keyWords("HTTPPassword"), ["http", "password"]);
  assert.deepEqual(keyWords("apikey"), ["api", "key"]);
  assert.deepEqual(keyWords("private-key-password"), ["private", "key", "password"]);
  assert.deepEqual(keyWords("npmAuthToken"), ["npm", "auth", "token"]);
});

Deno.test("/etc masking by key words: realistic files lose exactly their secret lines", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-s10-etc-" }));
  try {
    for (const [rel, text] of Object.entries(FILES)) {
      await Deno.mkdir(join(root, "etc", rel, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, "etc", rel), text);
    }
    const texts: FileStamp[] = [];
    scanEtc(join(root, "etc"), texts);
    const found = etcCredentialFiles(texts).map((p) => p.slice(root.length + 5)).sort();
    assert.deepEqual(found, [
      "NetworkManager/system-connections/Home.nmconnection",
      "app/config.ini",
      "app/config.json",
      "app/config.yaml",
      "app/env",
      "aws/credentials",
      "hostapd/hostapd.conf",
      "wireguard/wg0.conf",
      "wpa_supplicant/wpa_supplicant.conf",
    ]);
    for (const [rel, text] of Object.entries(FILES)) {
      const m = maskCredentialLines(text);
      const before = text.split("\n");
      const after = m ? m.text.split("\n") : before;
      assert.equal(after.length, before.length, rel);
      before.forEach((l, i) => {
        // An AWS key id goes too (its `AKIA…` shape, core/tools/secret_value.ts).
        const secret = l.includes(S) || l.includes(WGKEY) || /PresharedKey|AKIA/.test(l);
        if (secret) {
          // Emptied, or the assignment kept with a placeholder value (the key stays defined).
          assert.ok(!after[i].includes(S) && !after[i].includes(WGKEY), `${rel}: ${after[i]}`);
          assert.ok(after[i] === "" || after[i].includes(MASK), after[i]);
        } else assert.equal(after[i], l, `${rel}: ${l} kept`);
      });
      // Still the same format: a JSON file parses to the same keys.
      if (rel.endsWith(".json") && m) {
        assert.deepEqual(Object.keys(JSON.parse(m.text)), Object.keys(JSON.parse(text)));
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("/etc masking keeps a masked key defined: OpenSSL's config still loads in the sandbox", async () => {
  // Debian's openssl.cnf: `secret = pass:…` is referred to as `$insta::secret`; an emptied line
  // made OpenSSL (and node, curl) refuse the whole file ("variable has no value").
  const text = [
    "openssl_conf = openssl_init",
    "[openssl_init]",
    "[insta]",
    "secret = pass:insta # can be used for both client and server side",
    "[pbm] # Password-based protection for Insta CA",
    "ref = $insta::ref",
    "secret = $insta::secret # pass:insta",
  ].join("\n");
  const m = maskCredentialLines(text)!;
  const lines = m.text.split("\n");
  assert.match(lines[3], /^secret = xxxxxxxx /);
  assert.equal(lines[4], "[pbm] # Password-based protection for Insta CA");
  assert.equal(lines[6], "secret = $insta::secret # pass:insta");
  const ssl = new Deno.Command("sh", { args: ["-c", "command -v openssl"] }).outputSync();
  if (ssl.success) {
    const root = await Deno.makeTempDir({ prefix: "coyote-s10-ssl-" });
    try {
      await Deno.writeTextFile(join(root, "openssl.cnf"), m.text);
      const out = new Deno.Command("openssl", {
        args: ["version"],
        env: { OPENSSL_CONF: join(root, "openssl.cnf") },
        stderr: "piped",
      }).outputSync();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  }
});

/** Variables of a developer's machine that must pass into the sandbox. */
const ORDINARY: Record<string, string> = {
  PATH: "/home/u/.local/bin:/home/u/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
  HOME: "/home/u",
  LANG: "en_US.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm-256color",
  COLORTERM: "truecolor",
  TERM_PROGRAM: "kitty",
  USER: "u",
  LOGNAME: "u",
  SHELL: "/bin/bash",
  SHLVL: "2",
  PWD: "/home/u/p",
  OLDPWD: "/home/u",
  LESS: "-R",
  LESSOPEN: "| /usr/bin/lesspipe %s",
  LS_COLORS: "rs=0:di=01;34:ln=01;36:so=01;35:pi=40;33",
  MAIL: "/var/mail/u",
  EDITOR: "vim",
  XDG_SESSION_TYPE: "wayland",
  XDG_CURRENT_DESKTOP: "sway",
  XDG_DATA_DIRS: "/usr/local/share:/usr/share",
  XDG_CONFIG_DIRS: "/etc/xdg",
  XDG_DATA_HOME: "/home/u/.local/share",
  XDG_SESSION_ID: "3",
  DESKTOP_SESSION: "sway",
  SSH_CONNECTION: "10.0.0.2 51234 10.0.0.5 22",
  SSH_TTY: "/dev/pts/3",
  NVM_DIR: "/home/u/.nvm",
  GOPATH: "/home/u/go",
  GOROOT: "/usr/local/go",
  JAVA_HOME: "/usr/lib/jvm/java-17-openjdk-amd64",
  PYENV_ROOT: "/home/u/.pyenv",
  VIRTUAL_ENV: "/home/u/p/.venv",
  NODE_ENV: "development",
  MANPATH: "/usr/share/man",
  HISTSIZE: "10000",
  CFLAGS: "-O2 -g",
  npm_config_prefix: "/home/u/.npm-global",
};

/** Socket-shaped variables (runtime dir /run/user/1000 as `XDG_RUNTIME_DIR` names it). */
function sockety(sock: string): Record<string, string> {
  return {
    SWAYSOCK: "/run/user/1000/sway-ipc.1000.1234.sock",
    I3SOCK: "/run/user/1000/i3/ipc-socket.1234",
    TMUX: "/tmp/tmux-1000/default,4321,0",
    TMUX_PANE: "%3",
    GPG_AGENT_INFO: "/run/user/1000/gnupg/S.gpg-agent:0:1",
    WAYLAND_DISPLAY: "wayland-1",
    KITTY_LISTEN_ON: "unix:@mykitty",
    NVIM_LISTEN_ADDRESS: "/tmp/nvimXYZ/0",
    HYPRLAND_IPC_PATH: "/x",
    MY_BUS_ADDRESS: "unix:path=/tmp/bus",
    SVC_URL: "unix:/var/run/svc",
    ABSTRACT_NAME: "@/tmp/.X11-unix/X0",
    LIST_WITH_SOCKET: `/usr/bin:${sock}`,
    SOCKET_IN_CSV: `a,${sock},b`,
    RUNTIME_THING: "/run/user/1000/app/state",
    XDG_RUNTIME_DIR: "/run/user/1000",
  };
}

Deno.test("sandbox env: socket-shaped variables stay out by name and value; ordinary ones pass", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-s10-sock-" }));
  const sock = join(dir, "app.sock");
  const l = Deno.listen({ transport: "unix", path: sock });
  try {
    const bad = sockety(sock);
    const base = { ...ORDINARY, ...bad };
    const { env, dropped } = commandEnvironment({ base, sandboxed: true });
    for (const k of Object.keys(ORDINARY)) assert.ok(k in env, `${k} passes`);
    for (const k of Object.keys(bad)) assert.ok(dropped.includes(k) && !(k in env), `${k} out`);
    assert.equal(daemonPointer("X", `/usr/bin:${sock}`, undefined), "its value is a socket file");
    assert.equal(daemonPointer("X", `${dir}:/usr/bin`, undefined), undefined);
    // Unsandboxed commands keep them (they run on the host anyway).
    assert.ok("SWAYSOCK" in commandEnvironment({ base }).env);
    // For real: the launcher's environment on real bwrap.
    const { backend } = await detectBackend();
    assert.ok(backend);
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: join(dir, "cfg"),
      home: join(dir, "home"),
    });
    await policy.globsReady();
    const c = sandboxedCommand(policy, "env", { cwd: ws, backend, baseEnv: base });
    const o = await new Deno.Command(c.program, {
      args: c.args,
      cwd: ws,
      env: c.env,
      clearEnv: true,
    }).output();
    const out = new TextDecoder().decode(o.stdout);
    assert.ok(o.success, new TextDecoder().decode(o.stderr));
    for (const k of Object.keys(bad)) assert.doesNotMatch(out, new RegExp(`^${k}=`, "m"));
    for (const k of ["PATH", "LANG", "TERM", "LS_COLORS", "SSH_CONNECTION"]) {
      assert.match(out, new RegExp(`^${k}=`, "m"));
    }
  } finally {
    l.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sandbox env: the same with the guard forced open, in a headless session", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-s10-sock-h-" }));
  const sock = join(dir, "app.sock");
  const l = Deno.listen({ transport: "unix", path: sock });
  const env = await makeCoyoteEnv();
  const server = await startModelServer({ script: commandBatch({ env: "env" }) });
  try {
    const ws = join(dir, "ws");
    await Deno.mkdir(ws);
    const bad = sockety(sock);
    delete bad.XDG_RUNTIME_DIR; // Coyote's own runtime stays as the test runner has it
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: ws,
      env: childEnv(env, {
        baseURL: server.baseURL,
        extra: { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow", LANG: "C.UTF-8", ...bad },
      }),
    });
    assert.equal(r.code, 0, r.stderr);
    let out = "";
    for (const line of r.stdout.trim().split("\n").map((x) => JSON.parse(x))) {
      const u = line.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        out += (u.content as { content?: { text?: string } }[])
          .map((c) => c.content?.text ?? "").join("");
      }
    }
    assert.match(out, /^PATH=/m);
    assert.match(out, /^LANG=C\.UTF-8/m);
    for (const k of Object.keys(bad)) {
      if (k === "RUNTIME_THING" && !Deno.env.get("XDG_RUNTIME_DIR") && Deno.uid() !== 1000) {
        continue; // the runtime dir test needs this machine's runtime dir to be /run/user/1000
      }
      assert.doesNotMatch(out, new RegExp(`^${k}=`, "m"), k);
    }
  } finally {
    l.close();
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("masking: a value continued with a backslash is judged whole and loses its continuation lines", () => {
  const cont =
    "[http]\n\textraheader = AUTHORIZATION: basic \\\ndXNlcjpzZWNyZXRwYXNzd29yZDEyMw==\n[core]\n\tbare = false\n";
  const m = maskCredentialLines(cont)!;
  assert.ok(!m.text.includes("dXNlcjpzZWNyZXRwYXNzd29yZDEyMw"), m.text);
  assert.match(m.text, /bare = false/);
  const split = '[remote "o"]\n\turl = https://user:\\\nsecretpassword99@host/x\n';
  assert.ok(!maskCredentialLines(split)!.text.includes("secretpassword99"));
});
