/**
 * Where credentials live in a home directory: the stores the OS sandbox hides
 * from commands by default (core/policy/sandbox/profile.ts) and the guard asks
 * about before a read (core/policy/paths.ts `credentialRead`). Paths relative
 * to the home directory. One list for both, so the two views cannot drift; it
 * lives below both of them (the policy core never imports the sandbox).
 * @module
 */

/** Credential stores hidden by default (relative to home). */
export const HIDDEN_HOME_PATHS: readonly string[] = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gh",
  ".netrc",
  ".git-credentials",
  ".config/gcloud",
  ".azure",
  ".kube",
  ".docker/config.json",
  ".npmrc",
  ".pypirc",
  // Tokens in `url.*.insteadOf` URLs, credential helpers, `~/.config/git/credentials`; inside
  // the sandbox's home view a generated `.gitconfig` takes its place (sandbox/home_view.ts).
  ".gitconfig",
  ".config/git",
];
