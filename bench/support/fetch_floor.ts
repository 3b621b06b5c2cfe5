/**
 * The transport floor of `bench/agents.bench.ts`: what N model requests cost with no agent work
 * at all. In a fresh process (like the measured runner), one request first (as the lead's turn
 * leaves one pooled connection behind), then N chat-completions requests at once, each with a
 * body of `BODY_CHARS` characters (the size of an explore child's first request). Prints one JSON
 * line `{"t0": EPOCH_MS}`: when the N `fetch` calls began; the bench takes the arrival times from
 * its model server.
 *
 * Usage: `deno run --allow-net bench/support/fetch_floor.ts BASE_URL N BODY_CHARS`
 * @module
 */
const [baseURL, nArg, charsArg] = Deno.args;
const n = Number(nArg);
const now = () => performance.timeOrigin + performance.now();
const body = (i: number) => {
  const msg = {
    model: "scripted",
    stream: true,
    messages: [{ role: "system", content: "FLOOR" }, { role: "user", content: `floor ${i}` }],
  };
  const pad = Math.max(0, Number(charsArg) - JSON.stringify(msg).length);
  msg.messages[0].content = `FLOOR ${"x".repeat(pad)}`;
  return JSON.stringify(msg);
};
const post = (b: string) =>
  fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: b,
  });
await (await post(body(-1))).text();
const bodies = Array.from({ length: n }, (_, i) => body(i));
const t0 = now();
const sent = bodies.map(post);
for (const r of await Promise.all(sent)) await r.text();
console.log(JSON.stringify({ t0 }));
