/**
 * The version line `coyote --version` prints:
 * `coyote 0.1.0 (deno 2.9.6, x86_64-unknown-linux-gnu)` — Coyote's version (deno.json), the Deno
 * runtime it runs on (in a compiled binary: the `denort` it was built with) and the target triple.
 * Cheap to import: main.ts answers `--version` with it before loading anything else.
 * @module
 */
import pkg from "../../../deno.json" with { type: "json" };

/** Coyote's semver, from deno.json. */
export const VERSION: string = pkg.version;

/** `coyote <version> (deno <deno version>, <target triple>)`, no trailing newline. */
export function versionLine(): string {
  return `coyote ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.target})`;
}
