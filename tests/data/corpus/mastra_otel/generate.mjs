// Generate real Mastra traces (its AI tracing exported by @mastra/otel-exporter) with ground truth.
//
// A Mastra `Agent` (`@mastra/core`) with three `createTool()` tools, its model `@ai-sdk/openai`'s
// Chat Completions model (`openai.chat(...)`) pointed at the scripted OpenAI-compatible server
// (`../scripted_openai.py`, scenario `travel`, started here as a child process on 127.0.0.1),
// registered on a `Mastra` instance whose `observability` is `@mastra/observability`'s
// `Observability` with one `OtelExporter` (`@mastra/otel-exporter`), as Mastra's documentation
// sets it up. The exporter's own `exporter` option (its hook for an OpenTelemetry SpanExporter)
// is given one that keeps the spans the exporter's BatchSpanProcessor hands over, exactly as
// Mastra converted them; they are written as OTLP/JSON with `@opentelemetry/otlp-transformer`'s
// `JsonTraceSerializer` (what the OTLP http/json exporter sends; ids as lower-case hex).
//
// The ground truth is recorded by this program: the arguments each tool's execute() receives,
// its result or thrown error, the tool call ids it is given, the model's call order (from the
// returned steps) and the text `agent.generate` returns. Nothing is read back from the trace.
// The multi-turn run uses Mastra memory (`@mastra/memory` over `InMemoryStore`, no database):
// both turns name the same thread and resource, so the second turn's model call gets the first.
//
// Run: `npm ci && node generate.mjs` (in this folder).

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { z } from "zod";

const HERE = dirname(fileURLToPath(import.meta.url));
const version = (name) => JSON.parse(readFileSync(join(HERE, "node_modules", name, "package.json"), "utf8")).version;
const PRODUCER = `@mastra/core==${version("@mastra/core")} + @mastra/otel-exporter==${version("@mastra/otel-exporter")}`
  + ` + @mastra/observability==${version("@mastra/observability")} + @ai-sdk/openai==${version("@ai-sdk/openai")}`;

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
  }
}

// --- the travel agent's tools, recording the ground truth -------------------------------------

const ROUTE = { from: "Zürich", to: "São Paulo" };
const FLIGHTS = {
  LX92: { flight_id: "LX92", ...ROUTE, date: "2026-12-01", price_eur: 890 },
  LX94: { flight_id: "LX94", ...ROUTE, date: "2026-12-03", price_eur: 910 },
};
const AIRPORTS = [{ code: "ZRH", city: "Zürich" }, { code: "GRU", city: "São Paulo" }, { code: "GVA", city: "Genève" }];
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

const callId = (context) => context?.agent?.toolCallId ?? context?.toolCallId;

const tools = {
  search_flights: createTool({
    id: "search_flights",
    description: "Search the flights of a route on some dates.",
    inputSchema: z.object({
      route: z.object({ from: z.string(), to: z.string() }).describe("Where from and where to, by city."),
      dates: z.array(z.string()).describe("Dates, YYYY-MM-DD."),
    }),
    execute: async (args, context) => record("search_flights", args, callId(context), () => Object.values(FLIGHTS)
      .filter((f) => f.from === args.route.from && f.to === args.route.to && args.dates.includes(f.date))
      .map((f) => ({ ...f }))),
  }),
  list_airports: createTool({
    id: "list_airports",
    description: "List the airports the agency serves.",
    inputSchema: z.object({}),
    execute: async (args, context) => record("list_airports", args ?? {}, callId(context), () => AIRPORTS.map((a) => ({ ...a }))),
  }),
  book: createTool({
    id: "book",
    description: "Book a flight by its id; returns the confirmation.",
    inputSchema: z.object({ flight_id: z.string() }),
    execute: async (args, context) => record("book", args, callId(context), () => {
      const flight = FLIGHTS[args.flight_id];
      if (!flight) throw new Error(`unknown flight: ${args.flight_id}`); // an Error, as Python's ValueError
      return `Booked ${args.flight_id} ${flight.from} → ${flight.to} on ${flight.date}, confirmation ZRH-GRU-${args.flight_id}.`;
    }),
  }),
};

// one turn's ground truth: the executed calls in the order the model asked for them
function turnTruth(prompt, result) {
  const asked = result.steps.flatMap((step) => (step.toolCalls ?? []).map((call) => call.payload?.toolCallId ?? call.toolCallId));
  const detail = asked.map((id) => executed.find((c) => c.tool_call_id === id)).filter(Boolean);
  detail.push(...executed.filter((c) => !detail.includes(c))); // anything not asked (should be nothing)
  executed = [];
  return {
    user_prompt: prompt,
    expected_tool_trajectory: detail.map((c) => ({ tool_name: c.tool_name, args: c.args })),
    tool_calls_detail: detail,
    final_response: result.text,
  };
}

// --- the scripted server ----------------------------------------------------------------------

async function startServer() {
  const child = spawn("python3", [join(HERE, "..", "scripted_openai.py"), "0", "travel"], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /^PORT (\d+)$/.exec(line.trim());
    if (match) return { child, baseURL: `http://127.0.0.1:${match[1]}/v1` };
  }
  throw new Error("scripted server did not start");
}

// --- main -------------------------------------------------------------------------------------

const RUNS = [
  ["run1_sequential", ["Find a flight from Zürich to São Paulo on 2026-12-01 or 2026-12-03 and book the cheaper one."]],
  ["run2_parallel", ["Which airports do you know, and which flights go from Zürich to São Paulo on 2026-12-01 or 2026-12-03?"]],
  ["run3_multi_turn", ["Which flights go from Zürich to São Paulo on 2026-12-01 or 2026-12-03?", "Book the one on 2026-12-03, please."]],
  ["run4_failing_tool", ["Book flight LX99 from Zürich to São Paulo on 2026-12-01."]],
];

const collector = new OtlpJsonCollector();
const { child, baseURL } = await startServer();
try {
  const openai = createOpenAI({ baseURL, apiKey: "not-needed" });
  const agent = new Agent({
    id: "travel-agent",
    name: "travel_agent",
    instructions: "You are a travel agent. Use the tools to search and book flights.",
    model: openai.chat("gpt-4o-mini"),
    tools,
    memory: new Memory(),
  });
  const otel = new OtelExporter({
    provider: { custom: { endpoint: "http://127.0.0.1:9/v1/traces", protocol: "http/json" } }, // never called
    exporter: collector,
    signals: { logs: false },
  });
  const mastra = new Mastra({
    agents: { travel_agent: agent },
    storage: new InMemoryStore(),
    observability: new Observability({ configs: { otel: { serviceName: "corpus-mastra-travel", exporters: [otel] } } }),
  });
  const travelAgent = mastra.getAgent("travel_agent");
  for (const [name, prompts] of RUNS) {
    const turns = [];
    for (const prompt of prompts) {
      const result = await travelAgent.generate(prompt, {
        maxSteps: 6,
        memory: { thread: `corpus-${name}`, resource: "corpus-traveller" },
      });
      turns.push(turnTruth(prompt, result));
    }
    await otel.flush();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await otel.flush();
    collector.write(join(HERE, `${name}.otlp.json`));
    let truth = turns.length === 1 ? turns[0] : { turns };
    truth = { ...truth, producer: PRODUCER };
    if (turns.length > 1) {
      truth.conversation_note = "two agent.generate calls with memory { thread: 'corpus-run3_multi_turn', resource: "
        + "'corpus-traveller' } (@mastra/memory over InMemoryStore): Mastra sends the first turn to the model again; "
        + "each call is its own trace (JSON lines)";
    }
    writeFileSync(join(HERE, `${name}.ground_truth.json`), JSON.stringify(truth, null, 2) + "\n");
    console.log(name, JSON.stringify(truth).slice(0, 300));
  }
  await otel.shutdown();
} finally {
  child.kill();
}
