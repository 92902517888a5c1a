// Generate real Vercel AI SDK 5 traces (its built-in `experimental_telemetry` spans) with ground truth.
//
// The travel-booking agent of the corpus kit: `generateText` (runs 1 and 3) and `streamText` (runs
// 2 and 4, consumed fully) from `ai@5`, with three `tool()`s (zod `inputSchema`s) and
// `stopWhen: stepCountIs(5)`,
// over `@ai-sdk/openai`'s Chat Completions model (`openai.chat(...)`) pointed at the scripted
// OpenAI-compatible server (`../scripted_openai.py`, scenario `travel`, started here as a child
// process on 127.0.0.1). Tracing is the AI SDK's own, switched on per call with
// `experimental_telemetry: { isEnabled: true, functionId, metadata }` as its docs say; the SDK takes
// the global tracer provider, here an OpenTelemetry SDK `BasicTracerProvider` registered with an
// async-hooks context manager (what `NodeSDK` registers), whose `SimpleSpanProcessor` hands the
// finished spans to an exporter that keeps them; they are written as OTLP/JSON with
// `@opentelemetry/otlp-transformer`'s `JsonTraceSerializer` (ids as lower-case hex).
//
// The ground truth is recorded by this program: the arguments each tool's execute() receives, its
// result or raised error, the tool call ids it is given, the model's call order (from the returned
// steps) and the text the call returns. Nothing is read back from the trace. The multi-turn run
// passes the first turn's messages, its `response.messages` and the new user message to the second
// call; every call carries `metadata.sessionId`. The prompts and the flights and airports are read
// from `../scripted_openai.py`, so the tools return what the scripted model expects.
//
// A tool that throws (`book("LX99")`) becomes a `tool-error` part: the SDK gives the model the
// error's message as the tool result and takes the next step, so the agent recovers.
//
// Run: `npm ci && node generate.mjs` (in this folder).

import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { createOpenAI } from "@ai-sdk/openai";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const version = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")).version;
const PRODUCER = `ai==${version("ai")} (experimental_telemetry) + @ai-sdk/openai==${version("@ai-sdk/openai")}`;
const SYSTEM = "You are a travel agent. Use the tools to search and book flights.";

// --- the scenario, as the scripted server plays it --------------------------------------------

const SCENARIO = JSON.parse(spawnSync("python3", ["-c", [
  "import json, sys",
  `sys.path.insert(0, ${JSON.stringify(join(HERE, ".."))})`,
  "from scripted_openai import AIRPORTS, FLIGHTS, TRAVEL_RUNS",
  "print(json.dumps({'airports': AIRPORTS, 'flights': FLIGHTS, 'runs': TRAVEL_RUNS}))",
].join("\n")], { encoding: "utf8" }).stdout);

class ValueError extends Error {
  name = "ValueError";
}

function booking(flightId) {
  const flight = SCENARIO.flights[flightId];
  if (flight === undefined) throw new ValueError(`unknown flight: ${flightId}`);
  return `Booked ${flightId} ${flight.from} → ${flight.to} on ${flight.date}, confirmation ZRH-GRU-${flightId}.`;
}

function flights(route, dates) {
  return Object.values(SCENARIO.flights).filter(
    (f) => f.from === route.from && f.to === route.to && dates.includes(f.date));
}

// --- the spans, kept and written as OTLP/JSON -------------------------------------------------

class OtlpJsonCollector {
  spans = [];
  export(spans, resultCallback) {
    this.spans.push(...spans);
    resultCallback({ code: 0 }); // ExportResultCode.SUCCESS
  }
  shutdown() { return Promise.resolve(); }
  forceFlush() { return Promise.resolve(); }
  take() {
    const spans = this.spans;
    this.spans = [];
    return spans;
  }
  // One request per trace (in order of first span end): a JSON document for one trace, JSON lines for several.
  write(path) {
    const byTrace = new Map();
    for (const span of this.take()) {
      const id = span.spanContext().traceId;
      if (!byTrace.has(id)) byTrace.set(id, []);
      byTrace.get(id).push(span);
    }
    const requests = [...byTrace.values()].map(
      (group) => JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(group))));
    for (const request of requests) {
      const span = request.resourceSpans[0].scopeSpans[0].spans[0];
      if (!/^[0-9a-f]{32}$/.test(span.traceId)) throw new Error(`traceId not hex: ${span.traceId}`);
    }
    writeFileSync(path, requests.length === 1
      ? JSON.stringify(requests[0], null, 1) + "\n"
      : requests.map((r) => JSON.stringify(r) + "\n").join(""));
    return requests.map((r) => r.resourceSpans[0].scopeSpans[0].spans.length);
  }
}

// --- the travel agent's tools, recording the ground truth -------------------------------------

let executed = [];

function record(name, args, toolCallId, body) {
  const entry = { tool_name: name, args: structuredClone(args), tool_call_id: toolCallId };
  try {
    entry.result = body();
    return entry.result;
  } catch (error) {
    entry.error = `${error.name}: ${error.message}`;
    throw error;
  } finally {
    executed.push(entry);
  }
}

const tools = {
  search_flights: tool({
    description: "Search the flights of a route on some dates.",
    inputSchema: z.object({
      route: z.object({ from: z.string(), to: z.string() }).describe("Where from and where to, by city."),
      dates: z.array(z.string()).describe("Dates, YYYY-MM-DD."),
    }),
    execute: async (args, { toolCallId }) => record("search_flights", args, toolCallId,
      () => flights(args.route, args.dates)),
  }),
  list_airports: tool({
    description: "List the airports the agency serves.",
    inputSchema: z.object({}),
    execute: async (args, { toolCallId }) => record("list_airports", args, toolCallId,
      () => SCENARIO.airports.map((a) => ({ ...a }))),
  }),
  book: tool({
    description: "Book a flight by its id; returns the confirmation.",
    inputSchema: z.object({ flight_id: z.string() }),
    execute: async (args, { toolCallId }) => record("book", args, toolCallId, () => booking(args.flight_id)),
  }),
};

// one turn's ground truth: the executed calls in the order the model asked for them
function turnTruth(prompt, steps, text) {
  const asked = steps.flatMap((step) => step.toolCalls.map((call) => call.toolCallId));
  const detail = asked.map((id) => executed.find((c) => c.tool_call_id === id)).filter(Boolean);
  detail.push(...executed.filter((c) => !detail.includes(c))); // anything not asked (should be nothing)
  executed = [];
  return {
    user_prompt: prompt,
    expected_tool_trajectory: detail.map((c) => ({ tool_name: c.tool_name, args: c.args })),
    tool_calls_detail: detail,
    final_response: text,
  };
}

// --- the scripted server ----------------------------------------------------------------------

async function startServer() {
  const child = spawn("python3", [join(HERE, "..", "scripted_openai.py"), "0", "travel"],
    { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /^PORT (\d+)$/.exec(line.trim());
    if (match) return { child, baseURL: `http://127.0.0.1:${match[1]}/v1` };
  }
  throw new Error("scripted server did not start");
}

// --- main -------------------------------------------------------------------------------------

const collector = new OtlpJsonCollector();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": "corpus-vercel-ai-sdk5-travel" }),
  spanProcessors: [new SimpleSpanProcessor(collector)],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

// one user turn: generateText, or streamText consumed to its end; the steps and the answer
async function turn(model, name, messages, streamed) {
  const options = {
    model,
    system: SYSTEM,
    messages,
    tools,
    stopWhen: stepCountIs(5),
    experimental_telemetry: { isEnabled: true, functionId: "travel_agent", metadata: { sessionId: `corpus-${name}` } },
  };
  if (!streamed) {
    const result = await generateText(options);
    return { steps: result.steps, text: result.text, response: result.response };
  }
  const result = streamText(options);
  for await (const part of result.fullStream) {
    if (part.type === "error") throw part.error;
  }
  return { steps: await result.steps, text: await result.text, response: await result.response };
}

const { child, baseURL } = await startServer();
try {
  const model = createOpenAI({ baseURL, apiKey: "x" }).chat("gpt-4o-mini");
  const streamed = { run2_parallel: true, run4_failing_tool: true };
  for (const [name, prompts] of Object.entries(SCENARIO.runs)) {
    collector.take();
    const turns = [];
    let messages = [];
    for (const prompt of prompts) {
      messages = [...messages, { role: "user", content: prompt }];
      const { steps, text, response } = await turn(model, name, messages, streamed[name] === true);
      turns.push(turnTruth(prompt, steps, text));
      messages = [...messages, ...response.messages];
    }
    await new Promise((resolve) => setTimeout(resolve, 200)); // a streamed call ends its root span last
    const spans = collector.write(join(HERE, `${name}.otlp.json`));
    let truth = turns.length === 1 ? turns[0] : { turns };
    truth = { ...truth, producer: PRODUCER, api: streamed[name] ? "streamText" : "generateText" };
    if (turns.length > 1) {
      truth.conversation_note = "two generateText calls, the second given the first's messages, response.messages and the "
        + "new user message; both with experimental_telemetry.metadata.sessionId 'corpus-run3_multi_turn'; each call is "
        + "its own trace (JSON lines)";
    }
    writeFileSync(join(HERE, `${name}.ground_truth.json`), JSON.stringify(truth, null, 2) + "\n");
    console.log(name, `spans per trace ${JSON.stringify(spans)}`, JSON.stringify(truth).slice(0, 300));
  }
} finally {
  child.kill();
  await provider.shutdown();
}
